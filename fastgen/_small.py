"""Which inputs take the numpy passes instead of the compiled kernels.

A kernel's first use in a process with an empty numba cache costs 0.3–3 s of
compilation; numpy and scipy, vectorised as scikit-learn computes, need none.  An input
of at most :data:`SMALL_VALUES` stored values (n·d dense, nnz + n CSR) is computed by
the numpy passes (``fastgen/stats/numpy_passes.py``, ``fastgen/gda/small.py``,
``fastgen/naive_bayes/small.py``, ``fastgen/logistic/small.py``; scoring with
NaN in ``fastgen/gda/marginal.py``): a first answer
without compiling anything, and warm calls on such inputs within 2× of the compiled
kernels (benchmarks/NOTES.md, "numpy passes for small inputs"; scoring with NaN
2–14×, a few milliseconds, against seconds of compilation).  Larger inputs run the
kernels, which win there (2.5–9× at 10⁶ values) by their single pass and their threads.

The two paths compute the same formulas in a different order: they agree to 1e-12
relative (tests/test_small_path.py), not bit for bit.  Each path is bitwise
deterministic at any thread count: the numpy passes hold BLAS at one thread
(:func:`numpy_scope`) and use numpy's own reductions, whose order depends on the
shapes alone.

``FASTGEN_SMALL_VALUES`` (a non-negative whole number in digits, ``100000`` or
``1e5``, read once, when the first call imports this module) moves the threshold:
``0`` sends every input to the kernels, ``inf`` every input to numpy; any other value
(a sign, a fraction, a word, a number beyond ``sys.maxsize`` such as ``1e400``)
raises ValueError at that first call.
Tests set :data:`SMALL_VALUES` directly to run both paths on the same data.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

import numpy as np

# the scoring modes of the kernels: joint log-likelihoods, log posteriors, posteriors
from .kernels.modes import MODE_JLL, MODE_LOG_PROBA

__all__ = ["SMALL_VALUES", "values_of", "is_small", "small_work", "numpy_scope",
           "int_label_codes", "first_nonfinite", "finish_rows"]


#: The forms ``FASTGEN_SMALL_VALUES`` takes: a whole number in digits (``100000``), or
#: in digits times a power of ten (``1e5``), or ``inf`` (any case, as float() reads it);
#: blanks around it are ignored.
_SMALL_VALUES_FORM = re.compile(r"([0-9]+)(?:[eE]([0-9]+))?|inf", re.ASCII | re.IGNORECASE)


def _from_env(default: int) -> int:
    """``FASTGEN_SMALL_VALUES`` as a threshold: unset or empty gives ``default``; a
    non-negative whole number written in digits (``250``), or in digits times a power
    of ten (``1e5``), is the threshold; ``inf`` sends every input to numpy.  Anything
    else raises, naming the variable and its value (a typo must not silently change
    which path computes): a sign (``+5``, ``-0``), a fraction (``1.5``, ``1.0``), a
    word, and a number beyond any input's size (``1e400``, which float() would read as
    inf; above ``sys.maxsize``)."""
    raw = os.environ.get("FASTGEN_SMALL_VALUES", "")
    text = raw.strip()
    if not text:
        return default
    form = _SMALL_VALUES_FORM.fullmatch(text)
    if form is not None and text.lower() == "inf":
        return sys.maxsize
    fix = (f"set it to the most stored values an input may have to take the numpy "
           f"passes, in digits such as 100000 or 1e5 (0 sends every input to the "
           f"compiled kernels, inf every input to numpy), or unset it for the default "
           f"{default}")
    if form is None:
        raise ValueError(f"the environment variable FASTGEN_SMALL_VALUES={raw!r} is not "
                         f"a non-negative whole number; {fix}")
    digits, exponent = form.groups()
    if len(digits.lstrip("0")) + int(exponent or 0) > len(str(sys.maxsize)):
        value = None  # far beyond sys.maxsize: not worth forming the integer
    else:
        value = int(digits) * 10 ** int(exponent or 0)
    if value is None or value > sys.maxsize:
        raise ValueError(f"the environment variable FASTGEN_SMALL_VALUES={raw!r} is a "
                         f"non-negative whole number larger than any input can have "
                         f"({sys.maxsize} stored values); write inf to send every "
                         f"input to numpy, or unset it for the default {default}")
    return value


#: Inputs of at most this many stored values take the numpy passes (see the module
#: docstring).  At 10⁵ a warm call takes at most 1.8× the kernels' time on the numpy
#: path, where each kernel's first compilation costs 0.3–3 s (benchmarks/NOTES.md).
SMALL_VALUES = _from_env(100_000)


def values_of(X) -> int:
    """The stored values of X: n·d for dense X, nnz + n for sparse X (the rows count
    too: each costs a pass over its pointers)."""
    nnz = getattr(X, "nnz", None)
    if nnz is not None:
        return int(nnz) + int(X.shape[0])
    shape = getattr(X, "shape", None)
    if shape is None:
        return 0
    size = 1
    for s in shape:
        size *= int(s)
    return size


def is_small(X) -> bool:
    """Whether X is read by the numpy passes (at most :data:`SMALL_VALUES` values)."""
    return values_of(X) <= SMALL_VALUES


def small_work(values) -> bool:
    """:func:`is_small` for a pass whose size is not X's (``values`` stored values)."""
    return int(values) <= SMALL_VALUES


@contextlib.contextmanager
def numpy_scope():
    """BLAS on one thread inside: the numpy passes' products then add in an order that
    does not depend on the thread count (bitwise the same results for any count).  No
    warning for overflow or NaN: the callers check the results and name the cause, as
    they do for the kernels' (which compute with numpy's error model too)."""
    from ._runtime import blas_single_thread

    with blas_single_thread(), np.errstate(over="ignore", invalid="ignore"):
        yield


# ------------------------------------------------------------ validation, in numpy
# (the kernels of fastgen.kernels.labels, for inputs of at most SMALL_VALUES values)

def int_label_codes(y, lo, span):
    """``present`` (span,) uint8 flags of the labels in ``[lo, lo + span)`` and each
    label's rank among them (int32), as :func:`fastgen.kernels.labels.int_label_codes`."""
    shifted = y - lo
    present = (np.bincount(shifted, minlength=span) > 0).astype(np.uint8)
    rank = (np.cumsum(present, dtype=np.int64) - present).astype(np.int32)
    return present, rank[shifted]


def first_nonfinite(a):
    """Index of the first NaN or infinity of a 1-D float array, or -1."""
    bad = np.flatnonzero(~np.isfinite(a))
    return int(bad[0]) if bad.size else -1


# ------------------------------------------------------------------ scoring, in numpy


def finish_rows(s, mode):
    """Rows of joint log-likelihoods ``s`` (n, K) finished per ``mode`` in place, as the
    kernels' ``finish_all_rows``: log posteriors s − logsumexp(s) (rows of all −inf
    stay −inf) or posteriors (rows of all −inf give zeros).  Returns the number of rows
    holding a NaN or whose maximum is ±inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        top = s.max(axis=1, initial=-np.inf) if s.shape[1] else np.zeros(s.shape[0])
        bad = int(np.count_nonzero(np.isnan(s).any(axis=1) | ~np.isfinite(top)))
        if mode == MODE_JLL:
            return bad
        shift = np.where(np.isfinite(top), top, 0.0)
        e = np.exp(s - shift[:, None])
        total = e.sum(axis=1)
        if mode == MODE_LOG_PROBA:
            with np.errstate(divide="ignore"):
                c = np.where(total != 0.0, shift + np.log(total), np.inf)
            s -= c[:, None].astype(s.dtype, copy=False)
        else:
            inv = np.where(total != 0.0, 1.0 / np.where(total != 0.0, total, 1.0), 0.0)
            s[...] = e * inv[:, None]
    return bad
