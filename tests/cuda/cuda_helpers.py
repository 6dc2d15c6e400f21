"""Helpers of the fastgen.cuda tests."""

import numpy as np


def rel_err(a, b):
    """max |a − b| relative to the largest |b| (the measure of the GPU issue)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / (scale if scale > 0 else 1.0))


def host(a):
    """A device array's contents on the host."""
    return a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)
