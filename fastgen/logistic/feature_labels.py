"""Names of the design's columns in the messages of fits, diagnostics and inference."""

from __future__ import annotations

__all__ = ["default_feature_names", "checked_feature_names", "design_column_label",
           "message_column_label"]


def checked_feature_names(feature_names, d):
    """``feature_names`` as a tuple of d strings (None stays None)."""
    if feature_names is None:
        return None
    names = tuple(str(s) for s in feature_names)
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} names but X has {d} columns")
    return names


def default_feature_names(d):
    """The names of unnamed features, ``x1 … xd`` (statsmodels' convention): the
    warnings and errors of fits, diagnostics and inference, and inference's tables,
    name column ``X[:, j]`` ``x{j+1}``."""
    return tuple(f"x{j + 1}" for j in range(d))


def design_column_label(names, j, d):
    """Name of design column j (the intercept is column d)."""
    if j == d:
        return "intercept"
    return names[j] if names is not None else f"x{j + 1}"



def message_column_label(names, j, d):
    """Design column j as messages name it: its name, quoted; an unnamed column by its
    default name with its position in X, ``'x4' (X[:, 3])``, so that statsmodels'
    default names (counted from 1) are never read as numpy's positions (from 0, as
    every other message counts columns)."""
    if j == d:
        return "'intercept'"
    if names is not None:
        return repr(names[j])
    return f"'x{j + 1}' (X[:, {j}])"
