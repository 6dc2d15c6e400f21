"""Statistical inference for a fitted logistic regression: standard errors, Wald tests,
robust (sandwich) and cluster covariances, likelihood-ratio statistics, summary tables.

Names follow statsmodels' results objects (``params``, ``bse``, ``tvalues``, ``pvalues``,
``conf_int()``, ``cov_params``, ``llf``, ``llnull``, ``llr``, ``llr_pvalue``, ``aic``,
``bic``, ``prsquared``, ``nobs``, ``df_model``, ``df_resid``, ``summary()``), and so does
the layout: intercept first (as after ``statsmodels.api.add_constant``); binary params of
shape (p,); multinomial params of shape (p, K−1) against the first class, as MNLogit.

Everything follows from one pass over X at the optimum
(:func:`fastgen.kernels.inference.inference_pass`): the log-likelihood, the score, the
Fisher information ``I = X̃ᵀ diag(w π(1−π)) X̃`` (binary; the (K−1)p-square block
matrix for multinomial) and, for the sandwich, the meat ``Σ_i w_i s_i s_iᵀ`` of the
per-row scores.  Cluster sums take one more (serial, memory-bound) pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.stats

from .._runtime import blas_single_thread, threads_for
from .._validation import (
    check_feature_names,
    check_sample_weight,
    check_X,
    check_y,
    csr_arrays,
    feature_names_of,
    is_sparse,
)
from .._warn import warn
from ..kernels import inference as _ki
from .diagnostics import (
    COLLINEAR_TOL,
    ILL_CONDITIONED,
    collinearity_in_order,
    default_feature_names,
    separation_advice,
)
from .params import CollinearityWarning, ConvergenceWarning, LogisticParams

__all__ = ["LogisticInference", "logistic_inference", "MAX_INFERENCE_PARAMS",
           "InferenceData", "is_dask_array"]

#: Largest number of coefficients (p·(K−1)) for which inference forms the dense
#: information matrix: 8192² float64 is 512 MiB, and the inverse and the sandwich need
#: two or three such matrices at once.
MAX_INFERENCE_PARAMS = 8192

#: A fitted linear predictor beyond this (|η| > 30: a probability within 1e-13 of 0
#: or 1) after an unpenalised fit means the classes are (quasi-)separated.
SEPARATION_ETA = 30.0


_COV_TYPES = ("nonrobust", "HC0", "HC1", "cluster")
_GROUP_MAX = 16
_SLOT_BUDGET = 8 * 1024 * 1024


def is_dask_array(X) -> bool:
    """True for a ``dask.array.Array`` (checked without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks")


# --------------------------------------------------------------------------- data


class InferenceData:
    """Validated X (dense or CSR) with its fixed work split; calls the inference kernels.

    The row groups depend on n, p and the slot size only, never on the thread count.
    """

    def __init__(self, X, fit_intercept):
        self.sparse = is_sparse(X)
        self.n, self.d = X.shape
        self.fi = bool(fit_intercept)
        self.p = self.d + (1 if self.fi else 0)
        self.X = X
        if self.sparse:
            self.csr = (*csr_arrays(X), self.d)
            self.block = 1
        else:
            blk = (1 << 15) // max(self.p, 1)
            self.block = int(min(2048, max(64, 1 << max(0, blk.bit_length() - 1))))

    def bounds(self, slot_size):
        G = max(1, min(_GROUP_MAX, _SLOT_BUDGET // max(slot_size, 1)))
        n = self.n
        if self.sparse:
            cost = self.csr[0].astype(np.float64) + np.arange(n + 1)
            inner = np.searchsorted(cost, cost[-1] * np.arange(1, G) / G)
            b = np.concatenate([[0], inner, [n]])
        else:
            nb = -(-n // self.block)
            G = max(1, min(G, nb))
            per = -(-nb // G)
            b = np.minimum(np.arange(0, nb + per, per) * self.block, n)
        return np.unique(b).astype(np.int64)

    def inference_pass(self, codes, w, B, want_meat, want_r, want_info=True):
        """(llf, score, information, meat, max|η|, R) at the reference-layout B (m, p).

        ``want_info=False``: the information is not formed (zero), the rest is the same
        to the last bit (the tiled multinomial kernel forms it anyway)."""
        m = B.shape[0]
        q = m * self.p
        R = np.zeros((self.n, m)) if want_r else np.zeros((0, m))
        slot = q * q * (2 if want_meat else 1)
        bounds = self.bounds(slot)
        with threads_for(self.X):
            if self.sparse:
                out = _ki.inference_pass_csr(*self.csr, codes, w, B, self.fi, bounds,
                                             want_meat, R, want_info)
            else:
                with blas_single_thread():
                    if _ki.use_tiles(m, self.p):
                        out = _ki.inference_pass_tiles(self.X, codes, w, B, self.fi, bounds,
                                                       _ki.INFERENCE_TILE_ROWS, want_meat, R)
                    else:
                        out = _ki.inference_pass(self.X, codes, w, B, self.fi, bounds,
                                                 self.block, want_meat, R, want_info)
        return (*out, R)

    def cluster_scores(self, R, groups, n_groups):
        if self.sparse:
            return _ki.cluster_scores_csr(*self.csr, R, groups, n_groups, self.fi)
        return _ki.cluster_scores(self.X, R, groups, n_groups, self.fi)


# --------------------------------------------------------------------------- results


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


# --------------------------------------------------------------------------- checks


def _check_not_separated(emax, method, confirm, n_classes, converged=True):
    """Raise if the data are separated (the MLE does not exist).

    The largest fitted |linear predictor| is the cheap signal; when it exceeds
    ``SEPARATION_ETA``, or the fit did not converge (a fit stopped by its own
    separation test can end with moderate |η|), ``confirm()`` runs the exact
    linear-programming test
    (:func:`fastgen.detect_separation` in memory, the same programme by passes over the
    blocks for Dask X: :func:`fastgen.dask.separation_over_blocks`), so large but
    finite effects are not refused.  The advice fits the number of classes
    (:func:`fastgen.logistic.diagnostics.separation_advice`).
    """
    if method != "MLE" or (emax <= SEPARATION_ETA and converged):
        return
    sep = confirm()
    if sep is None:
        warn(f"logistic_inference: some fitted probabilities are 0 or 1 to 13 digits "
             f"(|linear predictor| up to {emax:.3g}) and the exact separation test did "
             f"not finish; if the classes are separated, the standard errors are "
             f"meaningless", ConvergenceWarning)
        return
    if not sep.separated:
        return
    inf = sep.infinite_coefficients()
    shown = ", ".join(inf[:10]) + (f", … ({len(inf)} in all)" if len(inf) > 10 else "")
    raise ValueError(
        f"logistic_inference: {sep.kind} separation: the classes are perfectly "
        f"separable (coefficients that run to ±infinity: {shown}; fitted |linear "
        f"predictor| up to {emax:.3g}), so the maximum-likelihood estimate does not "
        f"exist and standard errors at the fitted coefficients are meaningless. "
        f"{separation_advice(n_classes, inference=True)}"
    )


def _check_full_rank(H, labels, m, p, classes):
    """Raise naming the collinear columns, by the rank rule of the fits.

    ``H`` is the information matrix in statsmodels' layout (intercept first; m
    equations of p coefficients); ``labels`` name its p columns as the fit's
    messages do (``intercept``, then the features).  The design's columns are checked on
    Σ_k H_kk (the information itself for binary models; for multinomial ones a
    weighted Gram with the design's null space, as the fit checks), by
    :func:`fastgen.logistic.diagnostics.collinearity_in_order` at ``COLLINEAR_TOL``:
    the column named is the later one of a dependent set, as in the fit's
    CollinearityWarning, and under the same name.  A multinomial information can also
    lose rank in one equation only; the full matrix is checked after, per equation.
    """
    G = sum(H[k * p:(k + 1) * p, k * p:(k + 1) * p] for k in range(m))
    col = collinearity_in_order(G, labels, tol=COLLINEAR_TOL)
    where = ""
    if col.full_rank and m > 1:
        eq = [f"{nm} (y={classes[k + 1]})" for k in range(m) for nm in labels]
        col = collinearity_in_order(H, eq, tol=COLLINEAR_TOL)
        where = " of the information matrix"
    if not col.full_rank:
        raise np.linalg.LinAlgError(
            f"logistic_inference: the design is rank-deficient{where} (rank {col.rank} of "
            f"{col.n_columns} columns, intercept included): {col.describe()}. These "
            f"coefficients are not identified and their standard errors are infinite "
            f"(a column whose 1 - R^2 on the columns before it is below "
            f"{COLLINEAR_TOL ** 2:.0e} counts as dependent, the rule of fit_logistic's "
            f"CollinearityWarning). Drop the named columns and refit"
        )


def _covariance(H):
    """(H⁻¹, log det H, C, its Cholesky factor L, scales s): H scaled to unit diagonal,
    C = S⁻¹HS⁻¹ = LLᵀ, so H⁻¹ = S⁻¹C⁻¹S⁻¹ whatever the units."""
    q = H.shape[0]
    s = np.sqrt(np.diag(H))
    C = H / s[:, None] / s[None, :]
    with blas_single_thread():
        c = scipy.linalg.cho_factor(C, lower=True, check_finite=False)
        cov = scipy.linalg.cho_solve(c, np.eye(q), check_finite=False)
    cov = cov / s[:, None] / s[None, :]
    logdet = 2.0 * float(np.sum(np.log(np.diag(c[0])))) + 2.0 * float(np.sum(np.log(s)))
    return 0.5 * (cov + cov.T), logdet, C, c[0], s


def _warn_ill_conditioned(C, L, cov, s, names):
    """Warn (:class:`CollinearityWarning`) when the unit-diagonal information C = LLᵀ has
    a condition number above ``ILL_CONDITIONED``, naming the columns of its nearly
    null direction (by inverse iteration: the components above a tenth of the largest).

    κ(C) from LAPACK's estimate of ‖C⁻¹‖₁ (``pocon``) and ‖C‖₁: O(q²) beside the
    inversion's O(q³)."""
    q = L.shape[0]
    anorm = float(np.max(np.sum(np.abs(C), axis=0)))
    rcond, info = scipy.linalg.lapack.dpocon(np.asfortranarray(L.T), anorm)  # C = UᵀU
    if info != 0 or rcond <= 0.0:
        rcond = 0.0
    kappa = np.inf if rcond == 0.0 else 1.0 / rcond
    if kappa <= ILL_CONDITIONED:
        return
    Cinv = cov * s[:, None] * s[None, :]  # C⁻¹
    v = Cinv[:, int(np.argmax(np.diag(Cinv)))].copy()
    for _ in range(30):
        v = Cinv @ v
        v /= np.max(np.abs(v))
    involved = [names[j] for j in np.flatnonzero(np.abs(v) >= 0.1)]
    vif = np.diag(Cinv)
    warn(f"logistic_inference: the information matrix is ill-conditioned (condition "
         f"number {kappa:.2g} after scaling to unit diagonal, above {ILL_CONDITIONED:.0e}):"
         f" the columns {involved} are nearly collinear (variance inflation up to "
         f"{float(np.max(vif[np.flatnonzero(np.abs(v) >= 0.1)])):.2g}); their standard "
         f"errors are inflated accordingly and rest on the last digits of the data. "
         f"Drop or combine one of them, or check how they were computed "
         f"(q = {q} coefficients)", CollinearityWarning)


def _check_size(q):
    if q > MAX_INFERENCE_PARAMS:
        gb = 3 * 8.0 * q * q / 1e9
        raise ValueError(
            f"logistic_inference forms the dense {q} x {q} information matrix, its "
            f"inverse and the sandwich: {gb:.3g} GB for {q} coefficients; the limit is "
            f"MAX_INFERENCE_PARAMS = {MAX_INFERENCE_PARAMS} coefficients. Select features "
            f"first (inference on every column of a wide sparse matrix is rarely wanted)"
        )


def _model_kind(model):
    if not isinstance(model, LogisticParams):
        raise ValueError(
            f"model must be a LogisticParams (the result of fit_logistic); got "
            f"{type(model).__name__}"
        )
    if model.solver == "firth":
        return "Firth"
    if model.l2 > 0:
        raise ValueError(
            f"the model was fitted with l2={model.l2:g}: Wald standard errors of a ridge "
            f"estimator describe its variance around a biased target, not uncertainty "
            f"about the coefficients, and are not what summary tables mean; refit with "
            f"l2=0 (or penalty='firth' under separation or for small samples)"
        )
    return "MLE"


def reference_coef(model):
    """The model's coefficients in the reference layout, (m, p), intercept last."""
    coef = np.asarray(model.coef, dtype=np.float64)
    icpt = np.asarray(model.intercept, dtype=np.float64)
    if coef.shape[0] > 1:
        coef = coef[1:] - coef[0]
        icpt = icpt[1:] - icpt[0]
    if model.fit_intercept:
        return np.ascontiguousarray(np.column_stack([coef, icpt]))
    return np.ascontiguousarray(coef)


@dataclass(frozen=True)
class _FitPass:
    """A fit's last pass over its data, at the estimate (see :func:`remember_fit_pass`)."""

    B: np.ndarray
    llf: float
    score: np.ndarray
    emax: float
    H: np.ndarray
    shape: tuple
    sparse: bool
    weighted: bool


def remember_fit_pass(model, data, w, B, llf, score, H, emax):
    """Keep, on the fitted ``model``, what the fit's last :meth:`InferenceData.
    inference_pass` computed at the estimate B (reference layout).

    :func:`logistic_inference` given the same data at the same coefficients would form
    the same information matrix again, bit for bit (the row groups and the kernel are
    the same).  It reuses it instead, after a pass that forms everything but the
    information (no SYRK, about a quarter of the pass) and finds the log-likelihood,
    every score component and max|η| equal to the fit's to the last bit: data that
    differ in any row that carries weight in the information change them.  On any
    difference it makes its own full pass.  The record is a plain attribute outside the
    dataclass fields: :func:`dataclasses.replace`, save/load and equality ignore it.
    """
    rec = _FitPass(B=np.array(B, dtype=np.float64), llf=float(llf),
                   score=np.array(score, dtype=np.float64), emax=float(emax),
                   H=np.array(H, dtype=np.float64), shape=(data.n, data.d),
                   sparse=bool(data.sparse), weighted=bool(w.shape[0] > 0))
    object.__setattr__(model, "_fit_pass", rec)


def _reuse_fit_pass(model, data, codes, w, B):
    """``inference_pass``'s outputs (no meat, no residuals) from the fit's record, or
    None when there is none or the data are not the fit's."""
    rec = getattr(model, "_fit_pass", None)
    if (rec is None or rec.shape != (data.n, data.d) or rec.sparse != data.sparse
            or rec.weighted != (w.shape[0] > 0) or rec.B.shape != B.shape
            or not np.array_equal(rec.B, B)):
        return None
    llf, g, _, M, emax, R = data.inference_pass(codes, w, B, False, False, want_info=False)
    if float(llf) != rec.llf or float(emax) != rec.emax or not np.array_equal(g, rec.score):
        return None
    return llf, g, rec.H.copy(), M, emax, R


def _feature_names(X, d, fit_intercept, feature_names):
    if feature_names is None:
        cols = getattr(X, "columns", None)
        feature_names = ([str(c) for c in cols] if cols is not None
                         else list(default_feature_names(d)))
    feature_names = [str(c) for c in feature_names]
    if len(feature_names) != d:
        raise ValueError(f"feature_names has {len(feature_names)} names for {d} features")
    return (["const"] if fit_intercept else []) + feature_names


def _group_codes(groups, n):
    if groups is None:
        raise ValueError("cov_type='cluster' needs groups (one cluster label per row)")
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(f"groups must have shape ({n},), one label per row of X; "
                         f"got {g.shape}")
    labels, codes = np.unique(g, return_inverse=True)
    if labels.shape[0] < 2:
        raise ValueError("cov_type='cluster' needs at least 2 distinct groups")
    return codes.reshape(-1).astype(np.int64), int(labels.shape[0])


# --------------------------------------------------------------------------- dask


def _dask_parts(model, X, y, sample_weight, want_meat, groups):
    """Sums of the per-block inference statistics over a Dask array's row blocks."""
    import dask

    from ..dask import as_dask_vector, as_dask_X, in_rows, row_blocks

    X = as_dask_X(X)
    yd = as_dask_vector(y, X, "y")
    wd = as_dask_vector(sample_weight, X, "sample_weight")
    B = reference_coef(model)
    classes = model.classes
    ng = 0
    gcodes = None
    if groups is not None:
        gl = np.asarray(dask.compute(groups)[0]) if is_dask_array(groups) else groups
        gcodes, ng = _group_codes(gl, X.shape[0])
    blocks = row_blocks(X, yd, wd)
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])])

    def part(xb, yb, wb, lo, hi):
        xb = check_X(xb, allow_sparse=True)
        yb = np.asarray(yb)
        codes = np.searchsorted(classes, yb)
        if np.any(codes >= classes.shape[0]) or np.any(classes[np.minimum(
                codes, classes.shape[0] - 1)] != yb):
            raise ValueError(f"y has labels outside the model's classes {classes.tolist()}")
        codes = codes.astype(np.int32)
        w = check_sample_weight(wb, xb.shape[0])
        data = InferenceData(xb, model.fit_intercept)
        llf, g, H, M, emax, R = data.inference_pass(codes, w, B, want_meat, ng > 0)
        S = data.cluster_scores(R, gcodes[lo:hi], ng) if ng else None
        cnt = np.bincount(codes, weights=w if w.shape[0] else None,
                          minlength=classes.shape[0])
        return llf, g, H, M, emax, S, cnt

    f = dask.delayed(in_rows, pure=True)
    parts = dask.compute(*[f(int(offsets[i]), part, xb, yb, wb, int(offsets[i]),
                             int(offsets[i + 1]))
                           for i, (xb, yb, wb) in enumerate(blocks)])
    llf = sum(pt[0] for pt in parts)
    g = sum(pt[1] for pt in parts)
    H = sum(pt[2] for pt in parts)
    M = sum(pt[3] for pt in parts)
    emax = max(pt[4] for pt in parts)
    S = sum(pt[5] for pt in parts) if ng else None
    counts = sum(pt[6] for pt in parts)
    return llf, g, H, M, emax, S, counts, ng, X


# --------------------------------------------------------------------------- public API


def logistic_inference(model, X, y, *, sample_weight=None, cov_type="nonrobust",
                       groups=None, ci="wald", alpha=0.05,
                       feature_names=None) -> LogisticInference:
    r"""Standard errors, tests and intervals for a fitted logistic regression.

    At the fitted coefficients :math:`\hat\beta` (reference-class layout), with fitted
    probabilities :math:`P_{ik}`, residuals :math:`r_{ik} = [y_i = k] - P_{ik}`, per-row
    scores :math:`s_i = r_i \otimes \tilde x_i` and frequency weights :math:`w_i`:

    .. math::

        I = \sum_i w_i\,(\operatorname{diag}P_i - P_iP_i^\top) \otimes \tilde x_i\tilde x_i^\top,
        \qquad
        M = \sum_i w_i\, s_i s_i^\top,

    ``cov_params`` is :math:`I^{-1}` (``"nonrobust"``), :math:`I^{-1} M I^{-1}` (``"HC0"``
    and ``"HC1"``: statsmodels' discrete models apply no small-sample factor to HC1,
    and neither does fastgen, so that both agree) or
    :math:`\frac{G}{G-1}\frac{N-1}{N-q} I^{-1}(\sum_g S_gS_g^\top)I^{-1}` (``"cluster"``,
    :math:`S_g = \sum_{i\in g} w_i s_i`, as statsmodels), with N the number of
    observations and q the number of coefficients.  Wald statistics
    :math:`z = \hat\beta/\mathrm{se}`, p-values :math:`2\Phi(-|z|)`.

    One pass over X forms the log-likelihood, the score, I and M; cluster sums take one
    more.

    Parameters
    ----------
    model : LogisticParams
        From :func:`fastgen.fit_logistic` with ``l2=0`` (binary or multinomial), or with
        ``penalty="firth"`` (binary).
    X : array-like (n, d), scipy sparse matrix, or dask array
        The data the model was fitted on (dense or CSR blocks for Dask).
    y : array-like (n,)
        Labels, among ``model.classes``.
    sample_weight : array-like (n,), optional
        Frequency weights: an integer weight w gives exactly the inference of the row
        repeated w times, and ``nobs`` is their sum.
    cov_type : {"nonrobust", "HC0", "HC1", "cluster"}
    groups : array-like (n,), optional
        Cluster labels, for ``cov_type="cluster"``.
    ci : {"wald", "profile"}
        What :meth:`LogisticInference.conf_int` returns.  ``"profile"`` (binary, in-memory
        data) also computes likelihood-ratio p-values ``lr_pvalues`` by refitting with
        each coefficient fixed at 0; for Firth fits both use the penalised likelihood,
        as logistf.
    alpha : float, default 0.05
        Level of the profile intervals.
    feature_names : sequence of str, optional
        Names of X's columns (default: a DataFrame's columns, else ``x1 … xd``).

    Returns
    -------
    LogisticInference

    Raises
    ------
    ValueError
        For a penalised fit (``l2 > 0``); on (quasi-)separated data (pointing to Firth);
        for more than :data:`MAX_INFERENCE_PARAMS` coefficients (stating the memory);
        for invalid inputs.
    numpy.linalg.LinAlgError
        On a collinear design, naming the columns.
    """
    method = _model_kind(model)
    if cov_type not in _COV_TYPES:
        raise ValueError(f"cov_type must be one of {_COV_TYPES}; got {cov_type!r}")
    if ci not in ("wald", "profile"):
        raise ValueError(f"ci must be 'wald' or 'profile'; got {ci!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    if method == "Firth" and cov_type != "nonrobust":
        raise ValueError("Firth fits support cov_type='nonrobust' only (the sandwich of a "
                         "penalised estimating equation is not implemented)")
    K = model.classes.shape[0]
    m = 1 if K == 2 else K - 1
    if K > 2 and model.parametrization == "symmetric":  # pragma: no cover - l2 > 0 only
        raise ValueError("multinomial inference needs the reference-class fit (l2=0)")
    d = model.n_features_in
    p = d + (1 if model.fit_intercept else 0)
    q = m * p
    _check_size(q)
    if model.feature_names is not None and not is_dask_array(X):
        # a frame scored after an array fit only labels the table: no warning
        check_feature_names(model.feature_names, feature_names_of(X), "LogisticParams")
    names = _feature_names(X, d, model.fit_intercept,
                           model.feature_names if feature_names is None else feature_names)
    want_meat = cov_type in ("HC0", "HC1")
    B = reference_coef(model)
    data = None
    if is_dask_array(X):
        if ci == "profile":
            raise ValueError("ci='profile' needs in-memory X (it refits the model)")
        llf, g, H, M, emax, S, counts, ng, Xd = _dask_parts(
            model, X, y, sample_weight, want_meat, groups if cov_type == "cluster" else None)
        if Xd.shape[1] != d:
            raise ValueError(f"X has {Xd.shape[1]} features but the model was fitted with {d}")
        if cov_type == "cluster" and groups is None:
            raise ValueError("cov_type='cluster' needs groups (one cluster label per row)")
        nobs = float(counts.sum())
    else:
        X = check_X(X, allow_sparse=True)
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features but the model was fitted with {d}")
        classes, codes = check_y(y, X.shape[0], min_classes=1)
        pos = np.searchsorted(model.classes, classes)
        if (np.any(pos >= K) or not np.array_equal(model.classes[np.minimum(pos, K - 1)],
                                                   classes)):
            raise ValueError(f"y has classes {classes.tolist()} that the model (classes "
                             f"{model.classes.tolist()}) was not fitted with")
        codes = pos[codes].astype(np.int32)
        w = check_sample_weight(sample_weight, X.shape[0])
        data = InferenceData(X, model.fit_intercept)
        cluster = cov_type == "cluster"
        if cluster:
            gcodes, ng = _group_codes(groups, X.shape[0])
        out = None if (want_meat or cluster) else _reuse_fit_pass(model, data, codes, w, B)
        if out is None:
            out = data.inference_pass(codes, w, B, want_meat, cluster)
        llf, g, H, M, emax, R = out
        S = data.cluster_scores(R, gcodes, ng) if cluster else None
        counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=K)
        nobs = float(counts.sum())
    llf = float(llf)
    feats = tuple(names[1:] if model.fit_intercept else names)

    def confirm():
        if data is None:
            from ..dask import separation_over_blocks

            return separation_over_blocks(X, y, sample_weight, model.classes,
                                          model.fit_intercept, feats)
        from .diagnostics import detect_separation

        return detect_separation(X, y, fit_intercept=model.fit_intercept,
                                 sample_weight=sample_weight, feature_names=feats)

    _check_not_separated(float(emax), method, confirm, K, bool(model.converged))
    # internal index k·p + j (intercept last) -> statsmodels' k·p + j (intercept first)
    if model.fit_intercept:
        within = np.concatenate([[p - 1], np.arange(p - 1)])
    else:
        within = np.arange(p)
    perm = (np.arange(m)[:, None] * p + within[None, :]).ravel()
    H = H[np.ix_(perm, perm)]
    labels = ["intercept", *names[1:]] if model.fit_intercept else list(names)
    _check_full_rank(H, labels, m, p, model.classes)
    cov, logdet, C, L, s = _covariance(H)
    _warn_ill_conditioned(C, L, cov, s,
                          [f"{nm} (y={model.classes[k + 1]})" for k in range(m)
                           for nm in labels] if K > 2 else labels)
    if want_meat:
        M = M[np.ix_(perm, perm)]
        cov = cov @ M @ cov
    elif cov_type == "cluster":
        S = S[:, perm]
        Sc = S @ cov
        cov = (ng / (ng - 1.0)) * ((nobs - 1.0) / (nobs - q)) * (Sc.T @ Sc)
    cov = 0.5 * (cov + cov.T)
    beta = B.ravel()[perm]
    bse = np.sqrt(np.diag(cov))
    z = beta / bse
    pv = 2.0 * scipy.stats.norm.sf(np.abs(z))
    # null model: intercept only
    pri = counts / nobs
    if method == "Firth":
        from .firth import firth_null_loglik

        llf = llf + 0.5 * logdet
        llnull = firth_null_loglik(counts)
    else:
        nz = counts > 0
        llnull = float(np.sum(counts[nz] * np.log(pri[nz])))
    df_model = float((p - 1) * m)
    df_resid = nobs - q
    llr = 2.0 * (llf - llnull)
    llr_p = float(scipy.stats.chi2.sf(llr, df_model)) if df_model > 0 else float("nan")
    profile = lrp = None
    if ci == "profile":
        if K > 2:
            raise ValueError("ci='profile' is implemented for binary models only")
        from .firth_profile import profile_inference

        profile, lrp = profile_inference(
            data, codes, w, B[0], cov[np.argsort(perm)][:, np.argsort(perm)], alpha,
            0.5 if method == "Firth" else 0.0,
            names=[names[i] for i in np.argsort(within)])
        profile = profile[within]
        lrp = lrp[within]

    def shape(a):
        return a.reshape(m, p).T.copy() if K > 2 else a

    return LogisticInference(
        params=shape(beta), bse=shape(bse), tvalues=shape(z), pvalues=shape(pv),
        cov_params=cov, llf=llf, llnull=llnull, llr=llr, llr_pvalue=llr_p,
        aic=-2.0 * llf + 2.0 * q, bic=-2.0 * llf + q * math.log(nobs),
        prsquared=1.0 - llf / llnull if llnull != 0 else float("nan"),
        nobs=nobs, df_model=df_model, df_resid=df_resid, feature_names=tuple(names),
        classes=model.classes, cov_type=cov_type, method=method,
        converged=bool(model.converged), ci=ci, ci_alpha=float(alpha),
        profile_ci=profile, lr_pvalues=lrp, n_groups=ng if cov_type == "cluster" else None,
        extra={"score": g, "max_abs_eta": float(emax)},
    )
