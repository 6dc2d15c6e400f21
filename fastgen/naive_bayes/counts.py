"""Deprecated alias, kept for one release: the statistics moved to
:mod:`fastgen.stats.counts` (``NBCounts``, ``nb_counts``, ``merge_counts``) and the
builders to :mod:`fastgen.naive_bayes.from_counts` (``nb_from_counts``,
``*_from_counts``, ``gaussian_nb_from_moments``).  Import them from :mod:`fastgen` or
:mod:`fastgen.naive_bayes` instead.
"""

import warnings

from ..stats.counts import NB_MODELS, NBCounts, merge_counts, nb_counts
from .from_counts import (
    bernoulli_nb_from_counts,
    categorical_nb_from_counts,
    check_counts,
    check_dtype,
    complement_nb_from_counts,
    gaussian_nb_from_moments,
    multinomial_nb_from_counts,
    nb_from_counts,
)

__all__ = [
    "NB_MODELS",
    "NBCounts",
    "nb_counts",
    "merge_counts",
    "nb_from_counts",
    "gaussian_nb_from_moments",
    "bernoulli_nb_from_counts",
    "multinomial_nb_from_counts",
    "complement_nb_from_counts",
    "categorical_nb_from_counts",
    "check_counts",
    "check_dtype",
]

warnings.warn(
    "fastgen.naive_bayes.counts is deprecated and will be removed in the next release; "
    "import its names from fastgen.naive_bayes (or fastgen.stats for NBCounts, "
    "nb_counts and merge_counts)",
    DeprecationWarning,
    stacklevel=2,
)
