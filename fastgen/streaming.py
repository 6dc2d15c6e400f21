"""Deprecated alias of the streaming names, kept for one release.

``NBCounts``, ``nb_counts`` and ``merge_counts`` live in :mod:`fastgen.stats.counts`,
``nb_from_counts`` in :mod:`fastgen.naive_bayes.from_counts`; import them from
:mod:`fastgen` instead.
"""

import warnings

from .naive_bayes.from_counts import nb_from_counts
from .stats.counts import NB_MODELS, NBCounts, merge_counts, nb_counts

__all__ = ["NB_MODELS", "NBCounts", "nb_counts", "merge_counts", "nb_from_counts"]

warnings.warn(
    "fastgen.streaming is deprecated and will be removed in the next release; import "
    "NBCounts, nb_counts, merge_counts and nb_from_counts from fastgen",
    DeprecationWarning,
    stacklevel=2,
)
