"""The results of logistic inference: :class:`LogisticInference`, its intervals, its
statsmodels-style text summary and its DataFrame.

Imports: numpy, scipy.stats (pandas on use) only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.stats

__all__ = ["LogisticInference"]


@dataclass(frozen=True)
class LogisticInference:
    """Inference for a fitted logistic regression, in statsmodels' vocabulary.

    Coefficients are laid out as after ``statsmodels.api.add_constant``: the intercept
    (``const``) first.  Binary: vectors of shape (p,).  Multinomial with K classes:
    arrays of shape (p, K−1), column k holding the log-odds of ``classes[k+1]`` against
    ``classes[0]`` (statsmodels' MNLogit); ``cov_params`` is ((K−1)p, (K−1)p), equation
    by equation (index ``k·p + j``).

    Attributes
    ----------
    params, bse, tvalues, pvalues : ndarray
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
        (the largest absolute fitted linear predictor).
    """

    params: np.ndarray
    bse: np.ndarray
    tvalues: np.ndarray
    pvalues: np.ndarray
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

    @property
    def multinomial(self) -> bool:
        return self.params.ndim == 2

    def conf_int(self, alpha=0.05):
        """Confidence intervals, shape ``params.shape + (2,)`` (lower, upper).

        Wald: ``params ± z_{1−α/2} · bse``.  With ``ci="profile"`` the profile-likelihood
        intervals computed at ``ci_alpha`` (only that level is available).
        """
        if self.ci == "profile":
            if not math.isclose(alpha, self.ci_alpha):
                raise ValueError(
                    f"profile intervals were computed at alpha={self.ci_alpha}; call "
                    f"logistic_inference(..., ci='profile', alpha={alpha}) for another "
                    f"level, or use the Wald intervals (ci='wald')"
                )
            return self.profile_ci.copy()
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        z = scipy.stats.norm.isf(alpha / 2)
        return np.stack([self.params - z * self.bse, self.params + z * self.bse], axis=-1)

    def summary(self, alpha=0.05, title=None) -> str:
        """A text table in the layout of statsmodels' ``summary()``."""
        return _summary(self, alpha, title)

    def to_frame(self, alpha=0.05):
        """The coefficient table as a pandas DataFrame (needs pandas).

        Columns ``coef, std err, z, P>|z|, [α/2, 1−α/2]`` (plus ``P>|LR|`` when
        likelihood-ratio p-values were computed); multinomial fits get a
        (class, feature) row index.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is a test dependency
            raise ImportError("LogisticInference.to_frame needs pandas") from exc
        lo_hi = self.conf_int(alpha)
        a = alpha if self.ci == "wald" else self.ci_alpha
        cols = ["coef", "std err", "z", "P>|z|", f"[{a / 2:g}", f"{1 - a / 2:g}]"]
        if self.multinomial:
            idx = pd.MultiIndex.from_product(
                [[str(c) for c in self.classes[1:]], list(self.feature_names)],
                names=["class", "feature"])
            data = np.column_stack([self.params.T.ravel(), self.bse.T.ravel(),
                                    self.tvalues.T.ravel(), self.pvalues.T.ravel(),
                                    lo_hi[..., 0].T.ravel(), lo_hi[..., 1].T.ravel()])
        else:
            idx = pd.Index(list(self.feature_names))
            data = np.column_stack([self.params, self.bse, self.tvalues, self.pvalues,
                                    lo_hi[:, 0], lo_hi[:, 1]])
        df = pd.DataFrame(data, index=idx, columns=cols)
        if self.lr_pvalues is not None:
            df["P>|LR|"] = self.lr_pvalues
        return df


def _fmt(v, width=10):
    s = f"{v:.4g}" if abs(v) >= 1e4 or (v != 0 and abs(v) < 1e-3) else f"{v:.4f}"
    return s.rjust(width)


def _summary(res, alpha, title):
    from datetime import datetime

    width = 78
    if title is None:
        title = ("Firth Logistic Regression Results" if res.method == "Firth" else
                 ("MNLogit Regression Results" if res.multinomial
                  else "Logit Regression Results"))
    now = datetime.now()
    left = [
        ("Dep. Variable:", "y"),
        ("Model:", "MNLogit" if res.multinomial else "Logit"),
        ("Method:", res.method),
        ("Date:", now.strftime("%a, %d %b %Y")),
        ("Time:", now.strftime("%H:%M:%S")),
        ("converged:", str(bool(res.converged))),
        ("Covariance Type:", res.cov_type),
    ]
    right = [
        ("No. Observations:", f"{res.nobs:g}"),
        ("Df Residuals:", f"{res.df_resid:g}"),
        ("Df Model:", f"{res.df_model:g}"),
        ("Pseudo R-squ.:", f"{res.prsquared:.4g}"),
        ("Log-Likelihood:", f"{res.llf:.5g}"),
        ("LL-Null:", f"{res.llnull:.5g}"),
        ("LLR p-value:", f"{res.llr_pvalue:.4g}"),
    ]
    lines = [title.center(width), "=" * width]
    for (a, b), (c, e) in zip(left, right, strict=True):
        lines.append(f"{a:<17}{b:>21}   {c:<20}{e:>17}")
    lines.append("=" * width)
    ci = res.conf_int(alpha if res.ci == "wald" else res.ci_alpha)
    a = alpha if res.ci == "wald" else res.ci_alpha
    lo_name, hi_name = f"[{a / 2:.3f}", f"{1 - a / 2:.3f}]"
    names = list(res.feature_names)
    nw = max(12, max(len(n) for n in names) + 1)
    head = (" " * nw + "coef".rjust(10) + "std err".rjust(11) + "z".rjust(11)
            + "P>|z|".rjust(11) + lo_name.rjust(12) + hi_name.rjust(12))
    if res.lr_pvalues is not None:
        head += "P>|LR|".rjust(10)

    def rows(par, bse, z, pv, lo, hi, lr):
        out = []
        for j, nm in enumerate(names):
            s = (nm[:nw - 1].ljust(nw) + _fmt(par[j]) + _fmt(bse[j], 11) + _fmt(z[j], 11)
                 + f"{pv[j]:11.3f}" + _fmt(lo[j], 12) + _fmt(hi[j], 12))
            if lr is not None:
                s += f"{lr[j]:10.3f}"
            out.append(s)
        return out

    if res.multinomial:
        for k in range(res.params.shape[1]):
            lab = f"y={res.classes[k + 1]}"
            lines.append(lab.ljust(nw) + head[nw:])
            lines.append("-" * len(head))
            lines += rows(res.params[:, k], res.bse[:, k], res.tvalues[:, k],
                          res.pvalues[:, k], ci[:, k, 0], ci[:, k, 1], None)
    else:
        lines.append(head)
        lines.append("-" * len(head))
        lines += rows(res.params, res.bse, res.tvalues, res.pvalues, ci[:, 0], ci[:, 1],
                      res.lr_pvalues)
    lines.append("=" * width)
    if res.ci == "profile":
        lines.append("Confidence intervals: profile likelihood.")
    if res.method == "Firth":
        lines.append("Penalised log-likelihoods (Jeffreys prior, Firth 1993).")
    return "\n".join(lines)
