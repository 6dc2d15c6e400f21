"""Errors raised on a subset of X's rows, renamed to X's own rows."""

from __future__ import annotations

import contextlib
import re

import numpy as np

__all__ = ["rows_renamed", "retexted"]

#: The forms in which messages name a row: "row 3", "X[3, 1]", and "at index 3" (an
#: entry of a vector of the rows: sample_weight, y).
_ROW = re.compile(r"\brow (\d+)|\bX\[(\d+),|\bat index (\d+)")



def retexted(exc, text):
    """An exception of ``exc``'s type saying ``text`` (a ValueError where that type
    takes other constructor arguments), to raise ``from None`` in its place."""
    try:
        return type(exc)(text)
    except Exception:  # an exception type with its own constructor arguments
        return ValueError(text)

@contextlib.contextmanager
def rows_renamed(rows):
    """A ValueError raised in the block on a subset of X's rows is raised again naming
    the rows of X.

    ``rows`` maps the subset's row i to X's row: an int (the subset is the rows from
    there on: a row block), an index array, or a slice (the whole of X: nothing to
    rename).  A message without a row name is raised unchanged.
    """
    try:
        yield
    except ValueError as exc:
        if isinstance(rows, slice) or (isinstance(rows, int) and rows == 0):
            raise
        index = None if isinstance(rows, int) else np.asarray(rows)

        def name(m):
            form = next(g for g in (1, 2, 3) if m.group(g) is not None)
            local = int(m.group(form))
            row = local + rows if index is None else int(index[local])
            return (f"row {row}", f"X[{row},", f"at index {row}")[form - 1]

        msg = str(exc)
        renamed = _ROW.sub(name, msg)
        if renamed == msg:
            raise
        raise retexted(exc, renamed) from None
