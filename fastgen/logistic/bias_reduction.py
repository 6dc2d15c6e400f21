r"""Firth-type fits by number of classes and correction, and the inference of the
corrected ones: binary Firth (:mod:`fastgen.logistic.firth`), multinomial bias
reduction (:mod:`fastgen.logistic.firth_multinomial`), and Puhr, Heinze, Nold, Lusa &
Geroldinger's (2017) corrections for binary y, as R's logistf implements them.

Firth's estimate biases the predicted probabilities towards ½, so with rare events
their mean exceeds the event rate.  Both corrections keep Firth's finite estimates
under separation and make the mean predicted probability equal the observed (weighted)
event rate:

* **FLIC** (intercept correction): the slopes are Firth's; the intercept is
  re-estimated by maximum likelihood with the Firth linear predictor (without its
  intercept) as an offset, :math:`\sum_i w_i(y_i - \sigma(b + x_i^\top\hat\beta)) = 0`.
* **FLAC** (added covariate): every row i is complemented by two pseudo-rows with the
  same x, weights :math:`h_i/2` (h the diagonal of Firth's hat matrix at the estimate)
  and responses 1 and 0, marked by an indicator g; the maximum-likelihood fit on the
  augmented data with g as an added covariate gives the coefficients (g's is dropped,
  prediction takes g = 0).

Inference (:func:`corrected_inference`, reached through
:func:`fastgen.logistic_inference`) follows logistf's ``flic`` and ``flac``:

* FLIC: the slopes keep the Firth fit's standard errors, tests and intervals (Wald, or
  profile penalised likelihood with ``ci="profile"``), which are not corrected.  The
  intercept's standard error is :math:`\sqrt{[(\tilde X^\top W\tilde X)^{-1}]_{00}}`
  with W = diag(w π(1−π)) at the FLIC probabilities, and its interval the Wald
  interval with that error; its p-value is the Wald test of the offset model
  (standard error :math:`(\sum_i w_i\pi_i(1-\pi_i))^{-1/2}`), as logistf's.  The
  covariances between the intercept and the slopes are not estimated (NaN).  The
  log-likelihoods are the Firth fit's (penalised).
* FLAC: every coefficient's standard error, test and interval (Wald, or the profile of
  the ordinary likelihood with ``ci="profile"``) come from the maximum-likelihood fit
  on the augmented data, g's row and column dropped; the log-likelihoods are the Firth
  fit's (penalised) and ``nobs`` the original Σw.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg
import scipy.special

from .._validation import check_sample_weight, check_X, check_y, is_sparse
from .._warn import warn
from .centring import centred_frame, to_user
from .firth import fit_firth
from .firth_multinomial import fit_firth_multinomial
from .firth_objective import _Penalised
from .inference.frame import attach, restricted
from .inference.optimum import check_same_estimate
from .inference.passes import InferenceData
from .params import ConvergenceWarning, LogisticParams
from .penalised import _newton
from .ridge import ridge_fit
from .tails import norm_isf, norm_sf

__all__ = ["fit_bias_reduced", "fit_flic", "fit_flac", "corrected_inference",
           "CORRECTIONS"]

CORRECTIONS = (None, "flic", "flac")

#: Tolerance (Newton decrement) of FLIC's intercept refit: its score equation, the
#: mean predicted probability equal to the event rate, holds to rounding.
_OFFSET_INTERCEPT_TOL = 1e-20

#: Tolerance of FLAC's fit on the augmented data: its mean predicted probability equals
#: the event rate only at the optimum (the intercept's and g's score equations).
_AUGMENTED_TOL = 1e-13

#: Rows per chunk when forming X̃ densely (hat values, FLIC's information).
_CHUNK_ROWS = 8192


def fit_bias_reduced(X, y, *, correction=None, fit_intercept=True, sample_weight=None,
                     max_iter=100, tol=1e-8, init=None) -> LogisticParams:
    """``fit_logistic(X, y, penalty="firth", correction=...)``: Firth's fit for binary
    y, multinomial bias reduction for more classes, FLIC or FLAC (binary only)."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be None, 'flic' or 'flac'; got {correction!r}")
    X = check_X(X, allow_sparse=True)
    classes, _ = check_y(y, X.shape[0], min_classes=2)
    kw = dict(fit_intercept=fit_intercept, sample_weight=sample_weight,
              max_iter=max_iter, tol=tol, init=init)
    if classes.shape[0] > 2:
        if correction is not None:
            raise ValueError(f"correction={correction!r} (Puhr et al.'s FLIC/FLAC) is "
                             f"defined for binary y; y has {classes.shape[0]} classes. "
                             f"Use penalty='firth' without a correction")
        return fit_firth_multinomial(X, y, **kw)
    if correction is None:
        return fit_firth(X, y, **kw)
    if not fit_intercept:
        raise ValueError(f"correction={correction!r} corrects the intercept; it needs "
                         f"fit_intercept=True")
    return (fit_flic if correction == "flic" else fit_flac)(X, y, **kw)


def _rows(X, fit_intercept, r0, r1):
    """Rows r0:r1 of X̃ = [X, 1] as a dense float64 array."""
    Xc = X[r0:r1]
    Xc = Xc.toarray() if is_sparse(X) else np.asarray(Xc, dtype=np.float64)
    if fit_intercept:
        Xc = np.column_stack([Xc, np.ones(r1 - r0)])
    return Xc


def _beta(model):
    """(p,) binary coefficients, intercept last."""
    return np.r_[np.asarray(model.coef[0], dtype=np.float64),
                 np.asarray(model.intercept, dtype=np.float64)[:1]]


def _information(X, w, beta, fit_intercept):
    """X̃ᵀ diag(w π(1−π)) X̃ at β, and π."""
    n = X.shape[0]
    p = beta.shape[0]
    info = np.zeros((p, p))
    pi = np.empty(n)
    for r0 in range(0, n, _CHUNK_ROWS):
        r1 = min(n, r0 + _CHUNK_ROWS)
        Xt = _rows(X, fit_intercept, r0, r1)
        eta = Xt @ beta
        pr = scipy.special.expit(eta)
        pi[r0:r1] = pr
        v = pr * scipy.special.expit(-eta)
        if w.shape[0]:
            v = v * w[r0:r1]
        info += Xt.T @ (v[:, None] * Xt)
    return info, pi


def _hat(X, w, beta, fit_intercept):
    """Diagonal of Firth's hat matrix W^½X̃ I⁻¹ X̃ᵀW^½ at β (W = diag(w π(1−π)))."""
    info, _ = _information(X, w, beta, fit_intercept)
    L = np.linalg.cholesky(info)
    n = X.shape[0]
    h = np.empty(n)
    for r0 in range(0, n, _CHUNK_ROWS):
        r1 = min(n, r0 + _CHUNK_ROWS)
        Xt = _rows(X, fit_intercept, r0, r1)
        eta = Xt @ beta
        v = scipy.special.expit(eta) * scipy.special.expit(-eta)
        if w.shape[0]:
            v = v * w[r0:r1]
        Z = scipy.linalg.solve_triangular(L, Xt.T, lower=True, check_finite=False)
        h[r0:r1] = v * np.einsum("ji,ji->i", Z, Z)
    return h


def _binary_inputs(X, y, sample_weight):
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, classes, codes, w


def _refit_converged(firth, converged, correction):
    """Whether the corrected fit converged; a ConvergenceWarning where Firth's fit did
    (it warns itself otherwise) but the correction's own fit did not."""
    if firth.converged and not converged:
        warn(f"fit_logistic(penalty='firth', correction={correction!r}): Firth's fit "
             f"converged but the correction's maximum-likelihood fit did not; "
             f"converged=False", ConvergenceWarning)
    return bool(firth.converged and converged)


def fit_flic(X, y, *, fit_intercept=True, sample_weight=None, max_iter=100, tol=1e-8,
             init=None) -> LogisticParams:
    """FLIC: Firth's slopes, the intercept re-estimated by maximum likelihood with the
    Firth linear predictor as an offset (see the module docstring).  ``solver ==
    "flic"``; ``log_likelihood`` is the unpenalised one at the FLIC coefficients."""
    firth = fit_firth(X, y, fit_intercept=fit_intercept, sample_weight=sample_weight,
                      max_iter=max_iter, tol=tol, init=init)
    X, classes, codes, w = _binary_inputs(X, y, sample_weight)
    # the ordinary likelihood over the intercept alone, the slopes fixed at Firth's
    data = InferenceData(X, True)
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    st, _, converged = _newton(
        _Penalised(data, np.ascontiguousarray(codes, dtype=np.int32), w, 0.0),
        _beta(firth), [data.p - 1], 200, _OFFSET_INTERCEPT_TOL, sw)[:3]
    return dataclasses.replace(
        firth, intercept=np.array([st.beta[-1]], dtype=firth.intercept.dtype),
        solver="flic", log_likelihood=float(st.llf),
        converged=_refit_converged(firth, converged, "flic"))


def _augmented(X, codes, w, h):
    """FLAC's augmented data: X three times with the indicator g (0, 1, 1) as a last
    column, responses (y, 1, 0), weights (w, h/2, h/2)."""
    import scipy.sparse as sp

    n = X.shape[0]
    g = np.r_[np.zeros(n), np.ones(2 * n)]
    if is_sparse(X):
        Xa = sp.vstack([X, X, X], format="csr")
        Xa = sp.hstack([Xa, sp.csr_matrix(g[:, None])], format="csr")
    else:
        Xa = np.column_stack([np.vstack([X, X, X]), g])
    ya = np.r_[codes, np.ones(n, dtype=codes.dtype), np.zeros(n, dtype=codes.dtype)]
    wa = np.r_[w if w.shape[0] else np.ones(n), 0.5 * h, 0.5 * h]
    return Xa, ya, wa


def fit_flac(X, y, *, fit_intercept=True, sample_weight=None, max_iter=100, tol=1e-8,
             init=None) -> LogisticParams:
    """FLAC: the maximum-likelihood fit on Firth's augmented data with the
    pseudo-observation indicator as an added covariate (see the module docstring).
    ``solver == "flac"``; ``log_likelihood`` is the unpenalised one on the original
    data at the FLAC coefficients."""
    firth = fit_firth(X, y, fit_intercept=fit_intercept, sample_weight=sample_weight,
                      max_iter=max_iter, tol=tol, init=init)
    X, classes, codes, w = _binary_inputs(X, y, sample_weight)
    Xa, ya, wa = _augmented(X, codes, w, _hat(X, w, _beta(firth), True))
    beta, converged = ridge_fit(Xa, ya, wa, True, 0.0, _AUGMENTED_TOL, with_converged=True)
    beta = beta.reshape(-1)
    d = X.shape[1]
    beta = np.r_[beta[:d], beta[d + 1]]  # drop g
    eta = np.asarray(X @ beta[:d], dtype=np.float64).ravel() + beta[d]
    wv = w if w.shape[0] else np.ones(X.shape[0])
    yv = codes.astype(np.float64)
    llf = float(wv @ (yv * eta - np.logaddexp(0.0, eta)))
    return dataclasses.replace(
        firth, coef=beta[:d].reshape(1, -1).astype(firth.coef.dtype),
        intercept=np.array([beta[d]], dtype=firth.intercept.dtype), solver="flac",
        log_likelihood=llf, converged=_refit_converged(firth, converged, "flac"))


def _firth_of(Xc, y, sample_weight, shift):
    """The Firth fit a FLIC or FLAC model was corrected from (refitted: deterministic),
    on the centred ``Xc``, with the intercept of the user's coordinates."""
    firth = fit_firth(Xc, y, fit_intercept=True, sample_weight=sample_weight)
    return dataclasses.replace(
        firth, intercept=np.asarray(to_user(firth.coef, firth.intercept, shift),
                                    dtype=firth.intercept.dtype))


def _centred_beta(model, shift):
    """(p,) binary coefficients of the centred frame, intercept last."""
    beta = _beta(model)
    if shift is not None:
        beta[-1] += float(beta[:-1] @ shift)
    return beta


def corrected_inference(model, X, y, *, infer, sample_weight=None, cov_type="nonrobust",
                        groups=None, ci="wald", alpha=0.05, feature_names=None):
    """logistf's inference for a FLIC or FLAC model (see the module docstring);
    ``infer`` is :func:`fastgen.logistic_inference`, for the Firth and the augmented
    fits."""
    if cov_type != "nonrobust":
        raise ValueError(f"{model.solver.upper()} fits support cov_type='nonrobust' only "
                         f"(logistf's inference)")
    names = feature_names
    if names is None and model.feature_names is not None:
        names = model.feature_names
    Xv, classes, codes, w = _binary_inputs(X, y, sample_weight)
    Xc, shift = centred_frame(Xv, w, True)
    firth = _firth_of(Xc, y, sample_weight, shift)
    base = infer(firth, X, y, sample_weight=sample_weight, ci=ci, alpha=alpha,
                 feature_names=names)
    dtype = np.asarray(model.coef).dtype
    if model.solver == "flic":
        # FLIC's slopes are Firth's on these data
        check_same_estimate(model.coef, np.asarray(firth.coef, dtype=np.float64),
                            np.asarray(base.cov_params)[1:, 1:], "FLIC", dtype)
        # the information in the centred frame, its inverse mapped to the user's
        # intercept b = b_c − Σ m_j β_j: var(b) = uᵀ I_c⁻¹ u, u = (−m, 1)
        info, pi = _information(Xc, w, _centred_beta(model, shift), True)
        u = np.r_[-shift, 1.0] if shift is not None else np.eye(info.shape[0])[-1]
        var0 = float(u @ np.linalg.solve(info, u))
        wv = w if w.shape[0] else np.ones(pi.shape[0])
        se_offset = 1.0 / np.sqrt(float(wv @ (pi * (1.0 - pi))))
        b = float(model.intercept[0])
        params, bse = base.params.copy(), base.bse.copy()
        tvalues, pvalues = base.tvalues.copy(), base.pvalues.copy()
        params[0], bse[0] = b, np.sqrt(var0)
        tvalues[0] = b / bse[0]
        pvalues[0] = 2.0 * norm_sf(abs(b / se_offset))
        cov = base.cov_params.copy()
        cov[0, :] = cov[:, 0] = np.nan
        cov[0, 0] = var0
        profile = None
        if base.profile_ci is not None:
            z = norm_isf(alpha / 2.0)
            profile = base.profile_ci.copy()
            profile[0] = [b - z * bse[0], b + z * bse[0]]
        lrp = None if base.lr_pvalues is None else base.lr_pvalues.copy()
        if lrp is not None:
            lrp[0] = pvalues[0]
        return dataclasses.replace(
            base, params=params, bse=bse, tvalues=tvalues, pvalues=pvalues,
            cov_params=cov, profile_ci=profile, lr_pvalues=lrp, method="FLIC",
            converged=bool(model.converged))
    # FLAC: the ML fit on the augmented data (fitted in the centred frame)
    h = _hat(Xc, w, _centred_beta(firth, shift), True)
    d = Xv.shape[1]
    Xa, ya, wa = _augmented(Xc, codes, w, h)
    beta = ridge_fit(Xa, ya, wa, True, 0.0, _AUGMENTED_TOL).reshape(-1)
    if shift is not None:
        beta[-1] -= float(beta[:d] @ shift)
        Xa = _augmented(Xv, codes, w, h)[0]
    aug_names = None if names is None else [*names, "flac_indicator"]
    aug = dataclasses.replace(  # its responses are the codes 0 and 1, not the labels
        firth, coef=beta[:d + 1].reshape(1, -1), intercept=beta[d + 1:d + 2],
        solver="newton-cholesky", feature_names=None, classes=np.arange(2))
    res = infer(aug, Xa, ya, sample_weight=wa, ci=ci, alpha=alpha, feature_names=aug_names)
    keep = np.r_[0:d + 1]  # statsmodels' layout: const, x1..xd, then g
    cov = res.cov_params[np.ix_(keep, keep)]
    check_same_estimate(np.r_[np.asarray(model.intercept, dtype=np.float64).ravel(),
                              np.asarray(model.coef, dtype=np.float64).ravel()],
                        np.r_[beta[d + 1], beta[:d]], cov, "FLAC", dtype)
    out = dataclasses.replace(
        base, params=res.params[keep], bse=res.bse[keep], tvalues=res.tvalues[keep],
        pvalues=res.pvalues[keep], cov_params=cov,
        profile_ci=None if res.profile_ci is None else res.profile_ci[keep],
        lr_pvalues=None if res.lr_pvalues is None else res.lr_pvalues[keep],
        method="FLAC", converged=bool(model.converged))
    frame = restricted(res, keep, d)  # the centred covariance, for predictions' forms
    return out if frame is None else attach(out, *frame)
