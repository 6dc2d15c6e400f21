"""Mergeable statistics of the naive Bayes models, for streaming and distributed fits.

Kept so that ``fastgen.streaming.nb_counts`` and the other names below keep working:
they live in :mod:`fastgen.naive_bayes.counts`, which documents the statistics, their
exact merge and the stream loop (``nb_counts`` per chunk, ``merge_counts``,
``nb_from_counts``).  New code can import them from :mod:`fastgen.naive_bayes` or
:mod:`fastgen`.
"""

from .naive_bayes.counts import NB_MODELS, NBCounts, merge_counts, nb_counts, nb_from_counts

__all__ = ["NB_MODELS", "NBCounts", "nb_counts", "merge_counts", "nb_from_counts"]
