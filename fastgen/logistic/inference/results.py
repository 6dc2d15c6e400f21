"""The results of logistic inference: :class:`LogisticInference`, its intervals, its
statsmodels-style summary and its DataFrame, and the doors to the tests of linear
hypotheses (:mod:`.hypotheses`), predictions (:mod:`.prediction`) and marginal effects
(:mod:`.margins`).

Imports: numpy, scipy.special (through :mod:`fastgen.logistic.tails`) and the sibling
``summary`` (pandas and the other siblings on use) only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..tails import norm_isf
from .summary import Summary, build_summary

__all__ = ["LogisticInference", "FitData", "labelled"]


@dataclass(frozen=True)
class FitData:
    """What predictions and marginal effects need of a fit, held by reference (not
    copied).

    Attributes
    ----------
    model : LogisticParams
        The fitted model.
    X : ndarray or scipy sparse matrix
        The checked X the inference was computed on, without the intercept column.
    codes : ndarray (n,)
        y as indices into ``model.classes``.
    w : ndarray
        The frequency weights (empty for unit weights).
    row_labels : pandas.Index or None
        The rows' labels (a DataFrame's index), for ``get_prediction()`` on the fitted
        data; None for arrays.
    """

    model: object
    X: object
    codes: np.ndarray
    w: np.ndarray
    row_labels: object = None


@dataclass(frozen=True)
class LogisticInference:
    """Inference for a fitted logistic regression, in statsmodels' vocabulary.

    Coefficients are laid out as after ``statsmodels.api.add_constant``: the intercept
    (``const``) first.  Binary: vectors of shape (p,).  Multinomial with K classes:
    arrays of shape (p, K−1), column k holding the log-odds of ``classes[k+1]`` against
    ``classes[0]`` (statsmodels' MNLogit); ``cov_params`` is ((K−1)p, (K−1)p), equation
    by equation (index ``k·p + j``).

    Methods: ``conf_int(alpha)``, ``summary(alpha, yname=, odds_ratios=)`` (a
    :class:`~fastgen.logistic.inference.Summary`), ``to_frame(alpha, odds_ratios=)``,
    ``t_test(r_matrix)`` and ``wald_test(r_matrix)`` (constraint strings or matrices;
    :class:`~fastgen.logistic.inference.ContrastResults`), ``predict(exog)``,
    ``get_prediction(exog)`` (:class:`~fastgen.logistic.inference.PredictionResults`)
    and ``get_margeff(at, method, atexog, dummy, count)``
    (:class:`~fastgen.logistic.inference.MarginalEffects`), as statsmodels names them;
    :func:`fastgen.logistic.inference.lr_test` compares nested fits.

    With named columns (a DataFrame X, or a formula: :mod:`fastgen.formula`) the
    coefficient fields are pandas objects indexed by term name, as statsmodels returns
    them: a Series for a binary model, a DataFrame (terms × equations ``0 … K−2``) for
    a multinomial one, as MNLogit; with arrays they are arrays.

    Attributes
    ----------
    params, bse, tvalues, pvalues : ndarray, pandas.Series or pandas.DataFrame
        Estimates, standard errors ``√diag(cov_params)``, Wald statistics
        ``z = params / bse`` and two-sided p-values ``2 Φ(−|z|)``.
    cov_params : ndarray (q, q)
        ``I⁻¹`` (nonrobust), ``I⁻¹ M I⁻¹`` (HC0, HC1), or
        ``c · I⁻¹ (Σ_g S_g S_gᵀ) I⁻¹`` with ``c = G/(G−1) · (N−1)/(N−q)`` (cluster), where
        ``I`` is the Fisher information, ``M = Σ_i w_i s_i s_iᵀ`` the meat of the per-row
        scores ``s_i`` and ``S_g`` the score sum of cluster g.
    llf, llnull : float
        Log-likelihood of the model and of the intercept-only model.  For a Firth fit
        both are the penalised log-likelihoods ``l(β) + ½ log det I(β)``, as logistf and
        firthmodels report them.
    llr, llr_pvalue : float
        ``2(llf − llnull)`` and its χ²(df_model) upper tail.
    aic, bic : float
        ``−2 llf + 2q`` and ``−2 llf + q log(nobs)``, q the number of coefficients.
    prsquared : float
        McFadden's pseudo-R², ``1 − llf / llnull``.
    nobs : float
        Number of observations: the sum of the frequency weights if any.
    df_model, df_resid : float
        ``(p − 1)(K − 1)`` and ``nobs − q``, as statsmodels.
    feature_names : tuple of str
        Row names of ``params`` (``const`` first when an intercept was fitted).
    classes : ndarray
    cov_type : str
    method : str
        ``"MLE"`` or ``"Firth"``.
    converged : bool
        Whether the fit the inference was computed from converged.
    profile_ci : ndarray (p, 2) or None
        Profile-likelihood intervals at level ``1 − ci_alpha`` (``ci="profile"``).
    lr_pvalues : ndarray (p,) or None
        Likelihood-ratio p-values of ``β_j = 0`` (penalised for Firth; ``ci="profile"``).
    ci : str
        ``"wald"`` or ``"profile"``: what :meth:`conf_int` returns.
    ci_alpha : float
    n_groups : int or None
        Number of clusters for ``cov_type="cluster"``.
    extra : dict
        Diagnostics at the optimum: ``score`` (the gradient, ≈ 0) and ``max_abs_eta``
        (the largest absolute fitted linear predictor); under column offsets also
        ``centred_cov``, the centred frame's covariance that predictions, marginal
        effects and contrasts use (:mod:`fastgen.logistic.inference.frame`).
    dep_name : str
        The name of y in the summary (``Dep. Variable:``): a Series' name, a formula's
        left side, else ``"y"``.
    fit_intercept : bool
        Whether the model has an intercept (the first row of ``params``).
    fit_data : FitData or None
        The model and the data the inference was computed on (in memory), for
        predictions and marginal effects; None for Dask arrays.
    design : object or None
        The formula's design (:class:`fastgen.formula.FormulaDesign`), which turns new
        data into the model's columns; None without a formula.
    """

    params: object
    bse: object
    tvalues: object
    pvalues: object
    cov_params: np.ndarray
    llf: float
    llnull: float
    llr: float
    llr_pvalue: float
    aic: float
    bic: float
    prsquared: float
    nobs: float
    df_model: float
    df_resid: float
    feature_names: tuple
    classes: np.ndarray
    cov_type: str = "nonrobust"
    method: str = "MLE"
    converged: bool = True
    ci: str = "wald"
    ci_alpha: float = 0.05
    profile_ci: np.ndarray | None = None
    lr_pvalues: np.ndarray | None = None
    n_groups: int | None = None
    extra: dict = field(default_factory=dict, repr=False)
    dep_name: str = "y"
    fit_intercept: bool = True
    fit_data: FitData | None = field(default=None, repr=False, compare=False)
    design: object = field(default=None, repr=False, compare=False)

    @property
    def multinomial(self) -> bool:
        return np.ndim(self.params) == 2

    @property
    def is_labelled(self) -> bool:
        """Whether the coefficient fields are pandas objects (named columns)."""
        return not isinstance(self.params, np.ndarray)

    @property
    def exog_names(self) -> list:
        """The names of the rows of ``params`` (statsmodels' name)."""
        return list(self.feature_names)

    @property
    def param_names(self) -> list:
        """One name per coefficient, in the order of ``cov_params``: the feature names
        (binary), or ``name[class]`` equation by equation (multinomial; integral float
        classes without ``.0``)."""
        if not self.multinomial:
            return list(self.feature_names)
        return [f"{nm}[{class_label(c)}]" for c in self.classes[1:]
                for nm in self.feature_names]

    @property
    def params_vector(self) -> np.ndarray:
        """The coefficients as one vector in the order of ``cov_params``."""
        return np.asarray(self.params, dtype=np.float64).T.ravel()

    def interval_alpha(self, alpha):
        """The level of the intervals shown by :meth:`summary` and :meth:`to_frame`:
        ``alpha`` (None: 0.05, or the profile intervals' ``ci_alpha``).

        Raises
        ------
        ValueError
            For profile intervals (``ci="profile"``) asked at another level than
            they were computed at (no silent 95%).
        """
        if alpha is None:
            return self.ci_alpha if self.ci == "profile" else 0.05
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        if self.ci == "profile" and not math.isclose(alpha, self.ci_alpha):
            raise ValueError(
                f"alpha={alpha}: the profile intervals of this fit were computed at "
                f"alpha={self.ci_alpha}; call logistic_inference(..., ci='profile', "
                f"alpha={alpha}) (or fastgen.formula.logit(..., ci='profile', "
                f"alpha={alpha})) for that level, or leave alpha out")
        return alpha

    def conf_int_array(self, alpha=0.05):
        """:meth:`conf_int` as an array of shape ``params.shape + (2,)``."""
        if self.ci == "profile":
            if not math.isclose(alpha, self.ci_alpha):
                raise ValueError(
                    f"profile intervals were computed at alpha={self.ci_alpha}; call "
                    f"logistic_inference(..., ci='profile', alpha={alpha}) for another "
                    f"level, or use the Wald intervals (ci='wald')"
                )
            return np.array(self.profile_ci, copy=True)
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        z = norm_isf(alpha / 2)
        par, bse = np.asarray(self.params), np.asarray(self.bse)
        return np.stack([par - z * bse, par + z * bse], axis=-1)

    def conf_int(self, alpha=0.05):
        """Confidence intervals (lower, upper).

        Wald: ``params ± z_{1−α/2} · bse``.  With ``ci="profile"`` the profile-likelihood
        intervals computed at ``ci_alpha`` (only that level is available).

        Returns
        -------
        ndarray or pandas.DataFrame
            Arrays: shape ``params.shape + (2,)``.  Named columns: as statsmodels, a
            DataFrame with columns ``0, 1`` indexed by term (binary), or with columns
            ``lower, upper`` indexed by (class, term) (multinomial).
        """
        ci = self.conf_int_array(alpha)
        if not self.is_labelled:
            return ci
        import pandas as pd

        names = list(self.feature_names)
        if not self.multinomial:
            return pd.DataFrame(ci, index=pd.Index(names), columns=[0, 1])
        m = ci.shape[1]
        idx = pd.MultiIndex.from_product([[class_label(c) for c in self.classes[1:]],
                                          names], names=[self.dep_name, None])
        data = np.concatenate([ci[:, k, :] for k in range(m)], axis=0)
        return pd.DataFrame(data, index=idx, columns=["lower", "upper"])

    def summary(self, alpha=None, title=None, *, yname=None,
                odds_ratios=False) -> Summary:
        """The results table in the layout of statsmodels' ``summary()``.

        Parameters
        ----------
        alpha : float, optional
            Level of the intervals (default 0.05; with ``ci="profile"`` the level
            they were computed at, the only one allowed).
        title : str, optional
        yname : str, optional
            The name of y (``Dep. Variable:``), instead of :attr:`dep_name`.
        odds_ratios : bool, default False
            Show ``exp(coef)`` and the exponentiated interval bounds.

        Returns
        -------
        Summary
            ``str()`` gives the text; ``.tables``, ``.as_text()``, ``.as_latex()``,
            ``.as_html()``; notebooks show the HTML.
        """
        return build_summary(self, alpha, title, yname, odds_ratios)

    def to_frame(self, alpha=None, *, odds_ratios=False):
        """The coefficient table as a pandas DataFrame (needs pandas).

        Columns ``coef, std err, z, P>|z|, [α/2, 1−α/2]`` (plus ``P>|LR|`` when
        likelihood-ratio p-values were computed); multinomial fits get a
        (class, feature) row index.  ``odds_ratios=True`` adds ``odds ratio``
        (``exp(coef)``) and its interval bounds ``OR [α/2`` and ``OR 1−α/2]``
        (the exponentiated bounds).  ``alpha`` as for :meth:`summary`.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is a test dependency
            raise ImportError("LogisticInference.to_frame needs pandas") from exc
        a = self.interval_alpha(alpha)
        lo_hi = self.conf_int_array(a)
        cols = ["coef", "std err", "z", "P>|z|", f"[{a / 2:g}", f"{1 - a / 2:g}]"]
        par, bse = np.asarray(self.params), np.asarray(self.bse)
        z, pv = np.asarray(self.tvalues), np.asarray(self.pvalues)
        if self.multinomial:
            idx = pd.MultiIndex.from_product(
                [[str(c) for c in self.classes[1:]], list(self.feature_names)],
                names=["class", "feature"])
            data = np.column_stack([par.T.ravel(), bse.T.ravel(), z.T.ravel(),
                                    pv.T.ravel(), lo_hi[..., 0].T.ravel(),
                                    lo_hi[..., 1].T.ravel()])
        else:
            idx = pd.Index(list(self.feature_names))
            data = np.column_stack([par, bse, z, pv, lo_hi[:, 0], lo_hi[:, 1]])
        df = pd.DataFrame(data, index=idx, columns=cols)
        if self.lr_pvalues is not None:
            df["P>|LR|"] = np.asarray(self.lr_pvalues).T.ravel()
        if odds_ratios:
            df["odds ratio"] = np.exp(data[:, 0])
            df[f"OR [{a / 2:g}"] = np.exp(data[:, 4])
            df[f"OR {1 - a / 2:g}]"] = np.exp(data[:, 5])
        return df

    # ------------------------------------------------------------ hypotheses
    def t_test(self, r_matrix, *, alpha=0.05):
        """Wald z tests of linear hypotheses ``R β = q``, one per row, as statsmodels'
        ``t_test`` (normal distribution).

        Parameters
        ----------
        r_matrix : str, ndarray or (ndarray, ndarray)
            A constraint string in the coefficients' names (``"age = yrs_married"``,
            ``"x1 + x3 = 0, x2 = 1"``, ``"a = b = 0"`` for two constraints, numbers as
            ``-.5`` or ``1e-3``: patsy's grammar; multinomial names ``name[class]``,
            e.g. ``age[2]`` for class 2.0), a matrix R of
            shape (r, q) (then q = 0), or a pair (R, q).
        alpha : float, default 0.05
            The level of the result's ``conf_int``, ``summary_frame`` and ``summary``
            (each also takes its own).

        Returns
        -------
        ContrastResults
            ``effect`` (Rβ), ``sd``, ``tvalue``, ``pvalue``, ``conf_int()`` and
            ``summary_frame()``.
        """
        from .hypotheses import t_test

        return t_test(self, r_matrix, alpha)

    def wald_test(self, r_matrix):
        """The joint Wald χ² test of ``R β = q``, as statsmodels' ``wald_test``:
        ``W = (Rβ − q)ᵀ (R Σ Rᵀ)⁻¹ (Rβ − q)`` on ``rank(R)`` degrees of freedom, Σ the
        ``cov_params`` of the fit's ``cov_type``.

        Parameters
        ----------
        r_matrix : str, ndarray or (ndarray, ndarray)
            As for :meth:`t_test`.

        Returns
        -------
        ContrastResults
            ``statistic``, ``pvalue``, ``df_denom`` (the χ² degrees of freedom, as
            statsmodels names them) and ``distribution`` (``"chi2"``).
        """
        from .hypotheses import wald_test

        return wald_test(self, r_matrix)

    # ------------------------------------------------------------ predictions
    def predict(self, exog=None):
        """Fitted probabilities of new data (or of the fitted data): ``P(y = classes[1])``
        (binary, shape (n,)) or every class' (multinomial, (n, K)).

        ``exog`` is what the model was fitted on: the formula's variables (a DataFrame)
        for a formula fit, else X's columns (without an intercept column).  For new
        data of a formula fit the result is, as statsmodels', a Series (binary) or a
        DataFrame (multinomial, one column per class) indexed as ``exog``, NaN on the
        rows with a missing value; a category level the fit did not see is refused
        (``ValueError`` naming the column and the level).
        """
        from .prediction import predicted_probabilities

        return predicted_probabilities(self, exog)

    def get_prediction(self, exog=None):
        """Predicted probabilities with delta-method standard errors and intervals.

        Binary: ``p = σ(x̃ᵀβ)``, ``se = p(1−p)·√(x̃ᵀΣx̃)`` (``p(1−p)`` computed as
        ``σ(η)σ(−η)``, without cancellation at large η), intervals
        ``σ(x̃ᵀβ ± z·√(x̃ᵀΣx̃))`` (formed on the linear predictor and mapped back, so
        inside [0, 1]): statsmodels' ``get_prediction``.  Multinomial (which statsmodels
        lacks): each class' probability with the delta-method se, intervals formed on
        its log-odds ``log(p_k/(1−p_k))`` and mapped back.

        Parameters
        ----------
        exog : array-like or DataFrame, optional
            New data as for :meth:`predict` (default: the fitted data).

        Returns
        -------
        PredictionResults
            ``predicted``, ``se``, ``conf_int(alpha)`` and ``summary_frame(alpha)`` with
            columns ``predicted, se, ci_lower, ci_upper``, its rows labelled by the
            data's index (the fitted rows: those kept after missing values were
            dropped; new data of a formula: the rows without a missing value).
        """
        from .prediction import get_prediction

        return get_prediction(self, exog)

    # ------------------------------------------------------------ marginal effects
    def get_margeff(self, at="overall", method="dydx", atexog=None, dummy=False,
                    count=False):
        """Marginal effects of the regressors on the probabilities, with delta-method
        standard errors, as statsmodels' ``get_margeff`` (Logit and MNLogit).

        Parameters
        ----------
        at : {"overall", "mean", "median", "zero"}
            Average of the effects at every row, or the effect at the mean (median)
            row, or at zero regressors (intercept 1).  With frequency weights the
            averages and the median are weighted.
        method : {"dydx", "eyex", "dyex", "eydx"}
            ``dP/dx``, elasticity ``d log P / d log x``, ``dP / d log x`` or
            ``d log P / dx``.
        atexog : dict, optional
            ``{column: value}`` (column index of the coefficient table, the intercept
            at 0) fixed before ``at`` applies.
        dummy : bool, default False
            Columns of 0s and 1s: the discrete change ``P(x=1) − P(x=0)``.
        count : bool, default False
            Non-negative integer columns: ``(P(x+1) − P(x−1)) / 2``.

        Returns
        -------
        MarginalEffects
            ``margeff``, ``margeff_se``, ``margeff_cov``, ``tvalues``, ``pvalues``,
            ``conf_int()`` and ``summary_frame()`` (statsmodels' columns).
        """
        from .margins import get_margeff

        return get_margeff(self, at=at, method=method, atexog=atexog, dummy=dummy,
                           count=count)


def class_label(c) -> str:
    """A class as statsmodels labels its equations: integral floats without ``.0``."""
    if isinstance(c, (float, np.floating)) and float(c).is_integer():
        return str(int(c))
    return str(c)


def labelled(res: LogisticInference) -> LogisticInference:
    """``res`` with pandas coefficient fields indexed by ``feature_names`` (a Series
    per field for a binary model, a terms × equations DataFrame for a multinomial one);
    unchanged when already labelled."""
    if res.is_labelled:
        return res
    import pandas as pd

    names = pd.Index(list(res.feature_names))

    def lab(a):
        a = np.asarray(a)
        if a.ndim == 1:
            return pd.Series(a, index=names)
        return pd.DataFrame(a, index=names, columns=pd.RangeIndex(a.shape[1]))

    return replace(res, params=lab(res.params), bse=lab(res.bse),
                   tvalues=lab(res.tvalues), pvalues=lab(res.pvalues))
