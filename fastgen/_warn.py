"""Warnings reported at the user's line.

A fixed ``stacklevel`` points into fastgen whenever a warning is raised through a
wrapper (the thread-count decorator, an adapter, a builder called by a fit), so the
warning's file and line would name fastgen's internals.  :func:`warn` walks up the stack
to the first frame outside the fastgen package (and outside importlib's bootstrap, for
warnings raised at import) and reports the warning there, through the ordinary
filters and ``__warningregistry__`` of that frame's module.
"""

from __future__ import annotations

from .kernels._notice import warn_at_caller

__all__ = ["warn"]


def warn(message, category=UserWarning) -> None:
    """``warnings.warn(message, category)`` at the first caller outside fastgen (the
    kernel package's :func:`~fastgen.kernels._notice.warn_at_caller`, which the kernels'
    own set-up warnings use too)."""
    warn_at_caller(message, category)
