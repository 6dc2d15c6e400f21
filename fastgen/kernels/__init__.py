"""Numba kernels: no validation, no Python objects, no optional imports.

Every kernel here can be called from a user's own ``@njit`` function.  Each assumes
C-contiguous float32/float64 data, int32 class codes in ``[0, K)`` and validated
arguments; the public functions in :mod:`fastgen` do that validation.
"""
