"""The fitted logistic model (:class:`LogisticParams`) and :class:`ConvergenceWarning`.

Imports the shared params base only (``fastgen._params``); nothing of the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._params import FieldChecker, FittedParams, register_params
from .scoring import LOGISTIC_SCORER, LogisticTables, linear_predictor

__all__ = ["LogisticParams", "ConvergenceWarning", "PerfectSeparationWarning",
           "CollinearityWarning"]


class ConvergenceWarning(UserWarning):
    """The solver stopped before meeting its convergence criterion."""


class PerfectSeparationWarning(ConvergenceWarning):
    """The classes are completely or quasi-completely separated: the unpenalised
    maximum-likelihood estimate does not exist (some coefficients are infinite).

    A subclass of :class:`ConvergenceWarning`, so filters on that keep working.  The fit
    that raises it reports ``converged=False``; its finite coefficients are one point on
    a path to infinity.  Found by the exact linear-programming test of
    :func:`fastgen.detect_separation`.
    """


class CollinearityWarning(ConvergenceWarning):
    """The design (X with its intercept column) does not have full column rank: the
    unpenalised maximum-likelihood estimate is not unique.

    The objective is minimised (``converged`` stays True), but along the collinear
    combination it is flat, so the split of the coefficients among the named columns is
    arbitrary and their standard errors are infinite.  A subclass of
    :class:`ConvergenceWarning` (the fit did not find *the* estimate), so filters on that
    keep working.  See :func:`fastgen.logistic.collinear_columns`.
    """


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
        K' = 1 for binary, K otherwise; always float64, float32 data included: the
        intercept of the user's coordinates, b = b_c − Σ_j m_j β_j at a column offset
        m_j, rounded to float32 would move every fitted log-odds by up to an ulp of
        the intercept (float32 arrays given here, as in old files, are converted).
    intercept : ndarray (K',) float64
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
        Penalised objective and ``max_j |∂f/∂β_j| / (r_j·Σw)`` (r_j: column j's
        root-mean-square in the centred frame, 1 for the intercept) at the start and
        after each step: a diagnostic; convergence is the Newton decrement's
        certificate (see ``fastgen.logistic.newton``).  After a converged fit's last
        step, the certifying one, which is taken without an evaluation, the objective
        is the quadratic model's and the gradient entry NaN.
    step_size_history : ndarray (n_iter,)
        Accepted line-search step of each iteration (1 = full Newton step).
    solver : str
        "newton-cholesky" or "newton-cg".
    n_hessp : int
        Hessian-vector products used (Newton-CG only).
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
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
    feature_names: tuple | None = None

    scorer = LOGISTIC_SCORER
    _feature_table = "coef"

    def __post_init__(self):
        for name in ("coef", "intercept"):  # float64 whatever the data's dtype
            table = getattr(self, name)
            if isinstance(table, np.ndarray) and table.dtype == np.float32:
                object.__setattr__(self, name, table.astype(np.float64))
                # the consistency checks allow the rounding the tables were stored with
                object.__setattr__(self, "_stored_eps", float(np.finfo(np.float32).eps))
        self._check_arrays()
        check = FieldChecker(self)
        check.classes(min_classes=2)
        self._check_fields(check)
        check.feature_names()

    def _check_fields(self, check):
        """coef (K', d) and intercept (K',) finite, of one dtype, with K' = 1 for two
        classes ("binary") and K otherwise; the options and the fit's record."""
        K = check.K
        kk = 1 if K == 2 else K
        coef = check.array("coef", (kk, None), "float", "finite")
        if coef.shape[1] < 1:
            check.fail("coef", f"must have shape ({kk}, d) with d ≥ 1; got {coef.shape}")
        check.d = coef.shape[1]
        check.array("intercept", (kk,), coef.dtype, "finite")
        param = check.choice("parametrization", ("binary", "symmetric", "reference"))
        if (param == "binary") != (K == 2):
            check.fail("parametrization", f"must be 'binary' for two classes and "
                                          f"'symmetric' or 'reference' for more; got "
                                          f"{param!r} for {K} classes")
        check.real("l2", low=0.0)
        check.boolean("fit_intercept")
        check.integer("n_iter", low=0)
        check.boolean("converged")
        check.real("log_likelihood", finite=False)
        for name in ("objective_history", "grad_norm_history", "step_size_history"):
            check.array(name, (None,), "float")
        check.string("solver")
        check.integer("n_hessp", low=0)

    def _check_derived(self, check):
        """The layout the parametrisation promises: "reference" has class 0's
        coefficients and intercept at zero, "symmetric" coefficients and intercepts
        summing to zero over the classes (to rounding); without an intercept, every
        intercept is zero."""
        coef = self.coef.astype(np.float64)
        intercept = self.intercept.astype(np.float64)
        if not self.fit_intercept and np.any(intercept):
            check.fail("intercept", "must be zero: the model has fit_intercept=False (a "
                                    "damaged or edited file)")
        if self.parametrization == "reference" and (np.any(coef[0]) or intercept[0]):
            check.fail("coef", "must be zero for class index 0 in the reference "
                               "parametrization (a damaged or edited file)")
        if self.parametrization == "symmetric":
            eps = getattr(self, "_stored_eps", float(np.finfo(self.coef.dtype).eps))
            K = coef.shape[0]
            for name, table in (("coef", coef), ("intercept", intercept)):
                scale = float(np.max(np.abs(table), axis=0, initial=0.0).max(initial=0.0))
                if not np.all(np.abs(table.sum(axis=0)) <= 8.0 * K * eps * max(scale, 1e-300)):
                    check.fail(name, "must sum to zero over the classes in the symmetric "
                                     "parametrization (a damaged or edited file)")

    def scoring_tables(self):
        """("logistic", :class:`~fastgen.logistic.scoring.LogisticTables` (coef (K', d),
        intercept (K',)) in the params' dtype): η = X·coefᵀ + intercept, for
        :data:`~fastgen.logistic.scoring.LOGISTIC_SCORER`."""
        return "logistic", LogisticTables(self.coef, self.intercept)

    def decision_function(self, X):
        """Linear predictor ``X·coefᵀ + intercept`` on already validated X, shape (n, K').

        Raises ValueError naming the first NaN or infinity of X, or the row whose
        linear predictor overflows (scoring skips the up-front scan of X:
        ``checks_finite_scores`` of the scorer)."""
        return linear_predictor(self, X)
