"""How the kernels' numba set-up reports trouble: a warning at the caller's line, and
records on the ``"fastgen"`` logger.

The kernel package imports nothing of fastgen outside itself, so this module stands in
for :mod:`fastgen._warn` and :mod:`fastgen._log`: :func:`warn_at_caller` walks out of
the fastgen package as ``fastgen._warn.warn`` does, and :func:`logger` returns the
standard :mod:`logging` logger ``"fastgen"``, set up by fastgen's core when it has
handed its set-up in (:func:`use_logger`, called by ``fastgen._runtime``).  A program
that imports only :mod:`fastgen.kernels` gets the plain logger: its WARNING records then
reach stderr through :mod:`logging`'s last-resort handler.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings

__all__ = ["RuntimeSetupWarning", "JITDisabledError", "LOGGER_NAME", "logger", "use_logger",
           "warn_at_caller"]

LOGGER_NAME = "fastgen"


class RuntimeSetupWarning(UserWarning):
    """fastgen could not apply part of its process setup (see :mod:`fastgen._runtime`);
    it runs on without it."""


class JITDisabledError(RuntimeError):
    """numba's JIT is switched off (``NUMBA_DISABLE_JIT=1``): fastgen's kernels cannot
    run as Python (they call BLAS and CPU intrinsics), so the first call that needs a
    kernel stops with this error, which says how to debug a kernel instead."""


JIT_DISABLED_MESSAGE = (
    "fastgen's kernels need numba's JIT compiler, which NUMBA_DISABLE_JIT=1 switches "
    "off: they call BLAS and CPU intrinsics that cannot run as Python.  Unset "
    "NUMBA_DISABLE_JIT to run fastgen.  To debug a kernel, step through its Python "
    "source, kernel.py_func(...), with the JIT on (the kernels it calls run compiled), "
    "or run it compiled with NUMBA_DEBUGINFO=1 under gdb (numba's guide: 'Debugging "
    "JIT compiled code with GDB')")


_get_logger = None  # fastgen's set-up of the logger, once handed in


def use_logger(get_logger) -> None:
    """Log through ``get_logger()`` (a function returning the ``"fastgen"`` logger,
    set up) from now on."""
    global _get_logger
    _get_logger = get_logger


def logger() -> logging.Logger:
    """The ``"fastgen"`` logger (set up by fastgen's core if it has handed that in)."""
    get = _get_logger
    return get() if get is not None else logging.getLogger(LOGGER_NAME)


# the fastgen package: the parent of this kernels directory
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _internal(filename: str) -> bool:
    """fastgen's own frames, importlib's bootstrap (warnings at import) and contextlib's
    (the exit of a context manager fastgen's code runs in)."""
    return (os.path.abspath(filename).startswith(_PACKAGE_DIR)
            or ("importlib" in filename and "_bootstrap" in filename)
            or filename == contextlib.__file__)


def warn_at_caller(message, category=RuntimeSetupWarning) -> None:
    """``warnings.warn(message, category)`` at the first caller outside fastgen (the
    rule of ``fastgen._warn.warn``)."""
    frame = sys._getframe(1)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    g = frame.f_globals
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__", "<string>"),
                           registry=g.setdefault("__warningregistry__", {}))
