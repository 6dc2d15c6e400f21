"""The finish step of the CSR count kernel (``fastgen.kernels.sparse.csr_class_tables``)
and the size of the kernels' table of logs: plain Python, no numba.

A model builds its finish step before the counting pass (``naive_bayes/discrete.py``);
small inputs count with numpy (``fastgen/_small.py``) and fill the same step from the
counts, so this module loads without the kernels.  :mod:`fastgen.kernels.sparse`
re-exports the step, :mod:`fastgen.kernels.nb` the table size.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["LOG_TABLE_SIZE", "LogRows", "no_logs", "normalised_logs", "log_pair"]

#: Integer counts below this read their logarithm from a table (see
#: :func:`fastgen.kernels.nb.log_counts`).
LOG_TABLE_SIZE = 4096

# What ``csr_class_tables`` does with a class row of counts once it is complete, while
# it is in cache.  One record type for every step, so that numba compiles the kernel
# once (a type per step would compile it once per step: benchmarks/NOTES.md);
# the model builds the step with :func:`normalised_logs` or :func:`log_pair` and its
# own constants (naive_bayes/discrete.py), the counts alone take :func:`no_logs`.


class LogRows(NamedTuple):
    """The finish step of ``csr_class_tables``: log tables of each class row.

    Normalised (``normalise``, ``out_a`` only): out_a_kj = log(F_kj + α) −
    log(Σ_j F_kj + α·d), the sum by :func:`~fastgen.kernels.nb.row_total`.  A pair
    (``out_b`` with rows too): out_a_kj = log(F_kj + α) − shift_k and
    out_b_kj = log(base_k − F_kj + α) − shift_k, from one read of the row
    (:func:`bernoulli_log_rows`).  Neither (empty tables): the counts alone.  The
    entries are those :func:`~fastgen.kernels.nb.log_counts` (with
    :func:`~fastgen.kernels.nb.class_log_totals`) gives for the same counts.
    """

    alpha: float
    normalise: bool
    #: (T,) log(arange(T) + α), as for :func:`~fastgen.kernels.nb.log_counts`
    table: np.ndarray
    shift: np.ndarray  #: (K,), or empty
    base: np.ndarray  #: (K,), or empty
    out_a: np.ndarray  #: (K, d) float64, C-contiguous, written in place; or (0, 0)
    out_b: np.ndarray  #: (K, d) float64, C-contiguous, written in place; or (0, 0)


def no_logs():
    """The finish step that leaves the counts alone."""
    return LogRows(1.0, False, np.empty(0), np.empty(0), np.empty(0), np.empty((0, 0)),
                   np.empty((0, 0)))


def normalised_logs(alpha, table, out):
    """out_kj = log(F_kj + α) − log(Σ_j F_kj + α·d) into ``out`` (K, d)."""
    return LogRows(float(alpha), True, table, np.empty(0), np.empty(0), out,
                   np.empty((0, 0)))


def log_pair(alpha, shift, base, table, out_a, out_b):
    """out_a_kj = log(F_kj + α) − shift_k and out_b_kj = log(base_k − F_kj + α) −
    shift_k into ``out_a``, ``out_b`` (K, d)."""
    return LogRows(float(alpha), False, table, shift, base, out_a, out_b)
