"""Warnings reported at the caller's line, outside fastgen.

``warnings.warn(..., stacklevel=k)`` with a fixed k points into fastgen whenever a
decorator or a helper adds a frame (a ConvergenceWarning used to be reported at a line
of the thread-policy decorator).  :func:`warn` walks the stack instead and attributes
the warning to the first frame whose file is not inside the fastgen package: the
user's ``fit_logistic(...)`` line, or the test that called it.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def external_stacklevel() -> int:
    """The ``stacklevel`` that makes ``warnings.warn``, called by the function that
    calls this one, point at the first frame outside the fastgen package."""
    frame = sys._getframe(1)  # the caller of this function: stacklevel 1 there
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category) -> None:
    """``warnings.warn(message, category)`` attributed to the first caller outside
    fastgen (see :func:`external_stacklevel`)."""
    warnings.warn(message, category, stacklevel=external_stacklevel())
