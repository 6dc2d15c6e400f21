"""Warnings reported at the user's line.

A fixed ``stacklevel`` points into fastgen whenever a warning is raised through a
wrapper (the thread-count decorator, an adapter, a builder called by a fit), so the
warning's file and line would name fastgen's internals.  :func:`warn` walks up the stack
to the first frame outside the fastgen package (and outside importlib's bootstrap, for
warnings raised at import) and reports the warning there, through the ordinary
filters and ``__warningregistry__`` of that frame's module.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal(filename: str) -> bool:
    return (os.path.abspath(filename).startswith(_PACKAGE_DIR)
            or ("importlib" in filename and "_bootstrap" in filename))


def warn(message, category=UserWarning) -> None:
    """``warnings.warn(message, category)`` at the first caller outside fastgen."""
    frame = sys._getframe(1)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:  # called from fastgen with no outside caller (e.g. a thread)
        warnings.warn(message, category, stacklevel=2)
        return
    g = frame.f_globals
    # no module_globals: for code run by ``python -c`` its loader (BuiltinImporter)
    # raises ImportError when the warning machinery asks it for the source line
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__", "<string>"),
                           registry=g.setdefault("__warningregistry__", {}))
