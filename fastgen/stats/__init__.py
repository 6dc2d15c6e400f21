"""Sufficient statistics: the one seam between data and the generative models.

* :mod:`~fastgen.stats.moments`: per-class weighted counts, means and scatter
  (:class:`ClassMoments`, :func:`class_moments`, :func:`merge_moments`), of host X by the
  CPU kernels or of CUDA device X by :mod:`fastgen.cuda`; :func:`class_rows`, the checked
  rows the Gaussian fits read X through;
* :mod:`~fastgen.stats.counts`: the mergeable statistics of the naive Bayes models
  (:class:`NBCounts`, :func:`nb_counts`, :func:`merge_counts`);
* :mod:`~fastgen.stats.feature_counts`: the counting pass of the discrete naive Bayes
  models;
* :mod:`~fastgen.stats.category_counts`: the checks, table layout and counting pass
  of categorical naive Bayes;
* :mod:`~fastgen.stats.soft`: the same statistics with fractional class memberships
  (the M-step passes of EM over unlabelled rows).

The statistics import the kernels, :mod:`fastgen.cuda` and the shared core, never a
model family or an adapter; the models turn them into params
(:func:`fastgen.gda_from_moments`, :func:`fastgen.nb_from_counts`).  The names of
:mod:`~fastgen.stats.counts` load on first use, so that a Gaussian fit does not import
the sparse counting kernels.
"""

from .moments import (
    SCATTER_KINDS,
    ClassMoments,
    ClassRows,
    class_moments,
    class_rows,
    merge_moments,
    total_variance,
    variance_floor,
)

_COUNTS = ("NB_MODELS", "NBCounts", "nb_counts", "merge_counts")

__all__ = [
    "ClassMoments",
    "ClassRows",
    "class_moments",
    "class_rows",
    "merge_moments",
    "SCATTER_KINDS",
    "total_variance",
    "variance_floor",
    *_COUNTS,
]


def __getattr__(name):
    if name in _COUNTS:
        from . import counts

        return getattr(counts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
