"""The ``reg`` a per-class (QDA) fit that failed suggests: on the data's scale, making
every class pass (checked before it is suggested), never swamping the covariances.

Σ_k ← (1 − reg)Σ_k + reg·I adds reg·I in X's units and keeps (1 − reg) of every class
covariance.  The value suggested is the power of ten nearest a tenth of the features'
median within-class variance (:func:`_reg_target`), or the smallest that passes the
checks if that is larger, and never above :data:`REG_MAX`; where no such value is on
the scale of the features' variances, the advice is for standardised features; where
no class has any spread, reg·I is the whole covariance and the message says so.
"""

from __future__ import annotations

import numpy as np

__all__ = ["REG_MAX", "feature_variances", "reg_advice"]


#: The largest ``reg`` the advice of a failed per-class fit suggests for classes that
#: have a spread of their own: Σ_k ← (1 − reg)Σ_k + reg·I then keeps at least 90 % of
#: every class covariance (reg = 1 would replace each by I).
REG_MAX = 0.1


def _suggest_reg(covs, passes, above=0.0):
    """The smallest reg = 10^e above ``above`` for which every (1 − reg)·Σ_k + reg·I
    ``passes`` the factor's checks, as a float (1.0 at worst: reg = 1 gives I).

    The powers of ten searched start where reg becomes visible next to the smallest
    variance (10·d·ε·min_j Σ_jj); the search bisects them, and the value returned has
    passed the checks.
    """
    d = covs[0].shape[0]
    eye = np.eye(d)
    var = np.concatenate([np.diag(c) for c in covs])
    var = var[var > 0]
    low = 10.0 * d * np.finfo(float).eps * (float(var.min()) if var.size else 1.0)
    lo = max(int(np.floor(np.log10(max(low, above, 1e-300)))), -300)

    def works(e):
        reg = 10.0 ** e
        if reg <= above:
            return False
        return all(passes((1.0 - reg) * c + reg * eye) for c in covs)

    hi = 0  # reg = 1 gives I, which passes
    while lo < hi:
        mid = (lo + hi) // 2
        if works(mid):
            hi = mid
        else:
            lo = mid + 1
    return 1.0 if hi >= 0 or not works(hi) else 10.0 ** hi


def feature_variances(m):
    """(within, total): the per-feature variances of the data within the classes
    (pooled) and over all rows, from per-class moments ``m``."""
    W = m.counts
    n = float(W.sum())
    within = np.einsum("kjj->j", m.scatter) / n
    mu = (W[:, None] * m.means).sum(axis=0) / n
    return within, within + (W[:, None] * (m.means - mu) ** 2).sum(axis=0) / n


def _reg_target(within, total):
    """(variance, what): the variance a suggested ``reg`` aims at.  A tenth of the
    median positive within-class variance (the classes keep most of their own
    covariance); where no class has any spread (one row per class) reg stands for
    the whole class covariance, so the median positive variance of all rows; 0 if X
    is constant."""
    v = within[within > 0]
    if v.size:
        m = float(np.median(v))
        return 0.1 * m, f"a tenth of the features' median within-class variance, {m:.3g}"
    v = total[total > 0]
    if v.size:
        m = float(np.median(v))
        return m, f"the features' median variance, {m:.3g}, as no class has any spread"
    return 0.0, ""


def _scaled_reg(covs, passes, above, target):
    """The smallest power of ten that makes every class pass (:func:`_suggest_reg`),
    raised to the power of ten nearest ``target`` where that is larger and at most 1.
    Returns (reg, scaled): whether ``target`` set it.

    reg adds reg·I to each Σ_k in X's units: a value that merely passes the checks
    (1e-14 where a class has one row) leaves the class a near-zero variance in the
    directions it does not span, and posteriors of exactly 0 or 1."""
    least = _suggest_reg(covs, passes, above=above)
    if not target > 0:
        return least, False
    scaled = 10.0 ** np.round(np.log10(target))
    if not (least < scaled <= 1.0):
        return least, scaled <= least
    eye = np.eye(covs[0].shape[0])
    if not all(passes((1.0 - scaled) * c + scaled * eye) for c in covs):
        return least, False
    return float(scaled), True


def reg_advice(base, reg, passes, within, total):
    """The advice on ``reg`` of a failed per-class fit (``passes(S)``: whether a
    class covariance S passes the factor's checks): a value on the data's scale
    (:func:`_reg_target`) that makes every class pass and is at most :data:`REG_MAX`;
    where the features' variances are too large for such a reg to be on their scale,
    the value for the standardised features.  Where no class has any spread, reg·I is
    the whole covariance of every class: that is said, with the reg that gives each
    class about the features' variance."""
    lead = ("pass reg>0 (Σ ← (1−reg)Σ + reg·I): " if not reg else
            f"reg={reg:g} is not enough: ")
    target, what = _reg_target(within, total)
    if not np.any(within > 0):
        return lead + _no_spread_advice(base, reg, passes, total, target, what)
    if reg < REG_MAX and 10.0 ** np.round(np.log10(target)) <= REG_MAX:
        suggest, scaled = _scaled_reg(list(base), passes, reg, target)
        if suggest <= REG_MAX:
            why = f" (about {what})" if scaled else ""
            return lead + f"reg={suggest:.0e} makes the fit succeed{why}"
    # no reg ≤ REG_MAX is on the scale of these variances: advise it for standardised
    # features (their variances are at most 1, so the target is at most REG_MAX)
    sd = np.sqrt(np.where(total > 0, total, 1.0))
    scaled_base = [b / sd[:, None] / sd[None, :] for b in base]
    suggest, _ = _scaled_reg(scaled_base, passes, 0.0,
                             _reg_target(within / sd ** 2, total / sd ** 2)[0])
    least = _suggest_reg(list(base), passes, above=reg)
    units = (f"reg={least:.0e} makes the fit succeed, with posteriors near 0 or 1"
             if least <= REG_MAX else
             f"no reg ≤ {REG_MAX:g} makes the fit succeed, and a larger one would "
             f"swamp the class covariances")
    return (lead + f"reg adds reg·I in X's units, and the reg on these features' "
            f"scale ({what}) is above {REG_MAX:g}, where (1−reg)Σ would swamp the "
            f"class covariances: standardise the features (divide each by its standard "
            f"deviation), then reg={suggest:.0e} makes the fit succeed (unstandardised, "
            f"{units})")


def _no_spread_advice(base, reg, passes, total, target, what):
    """The reg advice where every class's rows are identical: (1 − reg)Σ_k is 0, so no
    covariance is estimated from the data and reg·I is every class's covariance; the
    reg suggested gives each class about the features' median variance (``target``),
    in X's units when that is at most 1, else on standardised features."""
    head = ("no class has any spread (each class's rows are identical), so no "
            "covariance can be estimated from the data, per class or pooled: reg·I is "
            "then every class's covariance")
    if not target > 0:  # X is constant: nothing to classify on
        least = _suggest_reg(list(base), passes, above=reg)
        return f"{head}, and X is constant; reg={least:.0e} makes the fit succeed"
    if 10.0 ** np.round(np.log10(target)) <= 1.0:
        suggest, _ = _scaled_reg(list(base), passes, reg, target)
        return (f"{head}; reg={suggest:.0e} makes the fit succeed, giving each class "
                f"about {what}")
    sd = np.sqrt(np.where(total > 0, total, 1.0))
    scaled_base = [b / sd[:, None] / sd[None, :] for b in base]
    suggest, _ = _scaled_reg(scaled_base, passes, 0.0, 1.0)
    return (f"{head}, and a reg ≤ 1 (reg = 1 makes it I) is small next to these "
            f"features' variances ({what}): standardise the features (divide each by its standard "
            f"deviation), then reg={suggest:.0e} makes the fit succeed, giving each "
            f"class the features' own variance")
