"""Tail probabilities and quantiles of the normal and chi-squared distributions.

The formulas ``scipy.stats.norm`` and ``scipy.stats.chi2`` evaluate (the same
``scipy.special`` functions, so the same numbers), without importing ``scipy.stats``,
which loads most of scipy (optimize, integrate, interpolate, spatial, ...) and took
0.3–1 s of a fresh process's first ``logistic_inference`` (benchmarks/NOTES.md).
"""

from __future__ import annotations

import numpy as np
import scipy.special

__all__ = ["norm_sf", "norm_isf", "chi2_sf", "chi2_isf"]


def norm_sf(x):
    """P(Z > x) for a standard normal Z: Φ(−x) (``scipy.stats.norm.sf``)."""
    return scipy.special.ndtr(np.negative(x))


def norm_isf(q):
    """The z with P(Z > z) = q: −Φ⁻¹(q) (``scipy.stats.norm.isf``)."""
    return np.negative(scipy.special.ndtri(q))


def chi2_sf(x, df):
    """P(χ²_df > x) (``scipy.stats.chi2.sf``): 1 for x ≤ 0, NaN for NaN."""
    x = np.asarray(x, dtype=np.float64)
    out = np.where(x > 0, scipy.special.chdtrc(df, np.maximum(x, 0.0)), 1.0)
    out = np.where(np.isnan(x), np.nan, out)
    return out[()] if out.ndim == 0 else out


def chi2_isf(q, df):
    """The x with P(χ²_df > x) = q (``scipy.stats.chi2.isf``)."""
    return scipy.special.chdtri(df, q)
