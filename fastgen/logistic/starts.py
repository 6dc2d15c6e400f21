"""Where a fit starts when the caller gives ``init``: :func:`better_start` keeps it only
where it is no worse than the default start.

Imports: ``objectives`` only.
"""

from __future__ import annotations

import numpy as np

from .objectives import make_objective

__all__ = ["better_start"]


def better_start(data, l2, n_classes, explicit, given, default):
    """``(start, given_kept)``: the caller's start ``given`` (K', p), unless the
    objective there is worse than at the ``default`` start (zero slopes, the log prior
    odds), which is then returned.

    A start worse than the model without features is no warm start: from saturated
    probabilities Newton's steps are cut to a few units each (the line search's step
    cap) and a start 1e6 away creeps for 1e5 iterations, where the default start
    converges in a handful.  Two evaluations without curvature, on a separate objective
    (the fit's records its first evaluation)."""
    probe = make_objective(data, l2, n_classes, explicit=explicit)

    def value(B):
        return probe.evaluate(B[0] if n_classes == 2 else B, False).objective

    with np.errstate(over="ignore", invalid="ignore"):
        f_given, f_default = value(given), value(default)
    if f_given <= f_default:
        return given, True
    return default, False
